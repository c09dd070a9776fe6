import { randomUUID } from 'node:crypto';
import amqp, { AmqpConnectionManager, ChannelWrapper } from 'amqp-connection-manager';
import type { Channel } from 'amqplib';
import { ChannelSupervision, superviseChannel } from './channel-supervision';
import { RMQ_SOCKET_OPTIONS } from './rmq.options';

async function until(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * A channel whose setup the broker refuses, or that the broker closes while the connection stays
 * up, comes back by itself (the connection manager alone would wait for a reconnect that never
 * comes, and its unheard 'error' would end the process), with the broker's reason in the log.
 */
describe('superviseChannel over RabbitMQ', () => {
  let manager: AmqpConnectionManager;
  let wrapper: ChannelWrapper;
  let supervision: ChannelSupervision;
  const warnings: string[] = [];
  const queue = `supervised.${randomUUID()}`;
  let refuseSetup = true;
  let setUp = 0;
  let current: Channel | undefined;

  beforeAll(async () => {
    manager = amqp.connect([process.env.RABBITMQ_URL!], RMQ_SOCKET_OPTIONS);
    wrapper = manager.createChannel({
      json: false,
      setup: async (channel: Channel) => {
        if (refuseSetup) {
          refuseSetup = false;
          // A declaration check of a queue that does not exist: the broker refuses it (404) and closes the channel.
          await channel.checkQueue(`missing.${randomUUID()}`);
        }
        await channel.assertQueue(queue, { exclusive: false, autoDelete: true });
        current = channel;
        setUp += 1;
      },
    });
    supervision = superviseChannel(() => manager, wrapper, { label: 'spec channel', warn: (m) => warnings.push(m), delayMs: 50 });
  });

  afterAll(async () => {
    supervision.stop();
    await wrapper.close();
    await manager.close();
  });

  it('sets the channel up again after the broker refused its setup, naming the reason', async () => {
    await until('the channel set up', () => setUp === 1);
    expect(warnings.some((w) => w.includes('NOT_FOUND'))).toBe(true);
    expect(warnings.some((w) => w.endsWith('renewing the broker connection'))).toBe(true);
    await expect(wrapper.sendToQueue(queue, Buffer.from('after a refused setup'))).resolves.toBe(true);
  });

  it('renews a channel the broker closed while the connection stayed up', async () => {
    const before = current!;
    await expect(before.checkQueue(`missing.${randomUUID()}`)).rejects.toThrow(/NOT_FOUND/);
    await until('a new channel', () => setUp === 2 && current !== before);
    expect(warnings.some((w) => w.includes('the broker closed the channel'))).toBe(true);
    await expect(wrapper.sendToQueue(queue, Buffer.from('on the new channel'))).resolves.toBe(true);
  });

  it('hears a failed setup the connection manager reports, and sets the channel up again', async () => {
    const before = setUp;
    // What amqp-connection-manager emits when a setup function fails: unheard, it would throw.
    expect(() => wrapper.emit('error', new Error('PRECONDITION_FAILED - inequivalent arg'))).not.toThrow();
    await until('the channel set up again', () => setUp === before + 1);
    expect(warnings.some((w) => w.includes('channel setup failed (PRECONDITION_FAILED - inequivalent arg)'))).toBe(true);
    await expect(wrapper.sendToQueue(queue, Buffer.from('after a renewal'))).resolves.toBe(true);
  });
});
