import { Exchanges, Queues } from '@cars/contracts';
import { createVhost, deleteVhost } from '@cars/testing';
import { ChannelModel, connect } from 'amqplib';
import { migrateQueues, queueType } from './queues.commands';

/** A vhost of this spec's own: the run's vhost holds the services' quorum queues already. */
const vhost = `cars_test_${process.pid}_${Date.now()}_queues`;
let url: string;
let connection: ChannelModel;

beforeAll(async () => {
  url = createVhost(vhost);
  connection = await connect(url);
  connection.on('error', () => undefined);
});

afterAll(async () => {
  await connection.close().catch(() => undefined);
  deleteVhost(vhost);
});

/** The deployment before quorum queues: classic durable queues holding messages, delivery.events bound. */
async function classicDeployment(): Promise<void> {
  const channel = await connection.createConfirmChannel();
  await channel.assertExchange(Exchanges.AuctionEvents, 'topic', { durable: true });
  for (const queue of [Queues.Observations, Queues.ObservationsDeadLetter, Queues.DeliveryEvents]) await channel.assertQueue(queue, { durable: true });
  await channel.bindQueue(Queues.DeliveryEvents, Exchanges.AuctionEvents, '#');
  await channel.assertQueue(Queues.QueryRpc, { durable: true, arguments: { 'x-message-ttl': 5000 } });
  for (let i = 0; i < 600; i += 1) {
    channel.sendToQueue(Queues.Observations, Buffer.from(`{"n":${i}}`), { persistent: true, messageId: `obs-${i}`, headers: { 'x-run': 'r1' } });
  }
  channel.publish(Exchanges.AuctionEvents, 'auction.created', Buffer.from('{"e":1}'), { persistent: true, messageId: 'evt-1', type: 'auction.created' });
  await channel.waitForConfirms();
  await channel.close();
}

async function drain(queue: string): Promise<{ body: string; messageId: unknown; headers: unknown }[]> {
  const channel = await connection.createChannel();
  const out: { body: string; messageId: unknown; headers: unknown }[] = [];
  for (let message = await channel.get(queue, { noAck: true }); message !== false; message = await channel.get(queue, { noAck: true })) {
    out.push({ body: message.content.toString(), messageId: message.properties.messageId, headers: message.properties.headers });
  }
  await channel.close();
  return out;
}

describe('queues:migrate', () => {
  it('moves classic durable queues to quorum queues keeping every message, its id and headers, and the binding', async () => {
    await classicDeployment();
    expect(await queueType(connection, Queues.Observations)).toBe('classic');

    const result = await migrateQueues(url);

    expect(result).toEqual([
      { queue: Queues.Observations, was: 'classic', moved: 600 },
      { queue: Queues.ObservationsDeadLetter, was: 'classic', moved: 0 },
      { queue: Queues.DeliveryEvents, was: 'classic', moved: 1 },
      { queue: Queues.QueryRpc, was: 'durable', moved: 0 },
      { queue: Queues.StatsRpc, was: 'absent', moved: 0 },
      { queue: Queues.WebhooksRpc, was: 'absent', moved: 0 },
    ]);
    expect(await queueType(connection, Queues.QueryRpc)).toBe('absent');
    for (const queue of [Queues.Observations, Queues.ObservationsDeadLetter, Queues.DeliveryEvents]) {
      expect(await queueType(connection, queue)).toBe('quorum');
      expect(await queueType(connection, `${queue}.migrating`)).toBe('absent');
    }
    const observations = await drain(Queues.Observations);
    expect(observations).toHaveLength(600);
    expect(observations[0]).toMatchObject({ body: '{"n":0}', messageId: 'obs-0', headers: { 'x-run': 'r1' } });
    expect(new Set(observations.map((m) => m.messageId)).size).toBe(600);
    expect(await drain(Queues.DeliveryEvents)).toEqual([expect.objectContaining({ body: '{"e":1}', messageId: 'evt-1' })]);

    // The binding follows the queue: an event published now reaches the quorum delivery.events.
    const channel = await connection.createConfirmChannel();
    channel.publish(Exchanges.AuctionEvents, 'auction.updated', Buffer.from('{"e":2}'), { messageId: 'evt-2' });
    await channel.waitForConfirms();
    await channel.close();
    expect(await drain(Queues.DeliveryEvents)).toEqual([expect.objectContaining({ messageId: 'evt-2' })]);

    // Run again: nothing to do.
    expect((await migrateQueues(url)).map((r) => r.was)).toEqual(['quorum', 'quorum', 'quorum', 'absent', 'absent', 'absent']);
  }, 30_000);

  it('refuses to move a classic queue while something consumes it, and changes nothing', async () => {
    const channel = await connection.createChannel();
    await channel.deleteQueue(Queues.Observations);
    await channel.assertQueue(Queues.Observations, { durable: true });
    await channel.consume(Queues.Observations, () => undefined);

    await expect(migrateQueues(url)).rejects.toThrow(/observations has 1 consumer\(s\): stop the change-detector/);
    expect(await queueType(connection, Queues.Observations)).toBe('classic');
    await channel.close();
  });
});
