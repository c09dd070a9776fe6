import { errorMessage, Exchanges, Queues, RPC_QUEUE_OPTIONS } from '@cars/contracts';
import { assertEventTopology, assertObservationTopology, connectToAny, DURABLE_QUEUE } from '@cars/messaging';
import type { Channel, ChannelModel, ConfirmChannel, GetMessage, MessageProperties, Options } from 'amqplib';
import { AdminCommand } from '../command';

/** The durable queues this release declares as quorum queues, in the order they are moved. */
const DURABLE_QUEUES = [Queues.Observations, Queues.ObservationsDeadLetter, Queues.DeliveryEvents] as const;

/** The RPC queues, transient since quorum queues (a durable one is deleted; the services declare it again). */
const RPC_QUEUES = [Queues.QueryRpc, Queues.StatsRpc, Queues.WebhooksRpc] as const;

/** Messages moved per round: fetched, republished with confirms, then acknowledged at once. */
const MOVE_BATCH = 500;

export type QueueType = 'absent' | 'classic' | 'quorum' | 'durable' | 'transient';

export interface QueueMigration {
  queue: string;
  /** What the queue was before the command. */
  was: QueueType;
  /** Messages carried over (classic queues only). */
  moved: number;
}

/**
 * `queues:migrate`: moves the durable queues from classic to quorum queues in place, keeping every
 * message. A classic queue cannot change type, so each is emptied into `<queue>.migrating` (a
 * quorum queue; for `delivery.events` bound to `auction.events` in its stead, so events published
 * meanwhile are kept), deleted, declared again as a quorum queue and filled back. Refuses a queue
 * that has consumers: stop the change-detector and delivery workers first, and ingestion
 * (publishers to `observations`, which the broker drops while the queue is absent). Idempotent: a
 * queue already quorum is left alone; a run cut short resumes from `<queue>.migrating`. RPC queues
 * declared durable by an earlier release are deleted (see migrateRpcQueue).
 */
export const queuesCommands: AdminCommand[] = [
  {
    name: 'queues:migrate',
    usage: 'queues:migrate',
    async run() {
      const url = process.env.RABBITMQ_URL;
      if (!url) throw new Error('set RABBITMQ_URL to the broker (or the comma-separated nodes of the cluster)');
      return { queues: await migrateQueues(url) };
    },
  },
];

export async function migrateQueues(url: string): Promise<QueueMigration[]> {
  const connection = await connectToAny(url, { clientProperties: { connection_name: 'admin queues:migrate' } });
  connection.on('error', () => undefined);
  try {
    const results: QueueMigration[] = [];
    for (const queue of DURABLE_QUEUES) results.push(await migrateQueue(connection, queue));
    for (const queue of RPC_QUEUES) results.push(await migrateRpcQueue(connection, queue));
    // The topology as the services declare it (bindings included), now that every queue is quorum.
    await withChannel(connection, async (channel) => {
      await assertObservationTopology(channel);
      await assertEventTopology(channel);
    });
    return results;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/**
 * An RPC queue declared durable by an earlier release is deleted (its requests expire within 5 s
 * anyway; refused while a service consumes it); the services declare it transient when they start.
 */
async function migrateRpcQueue(connection: ChannelModel, queue: string): Promise<QueueMigration> {
  const exists = await queueExists(connection, queue);
  if (!exists) return { queue, was: 'absent', moved: 0 };
  const durable = await withChannel(connection, (channel) => channel.assertQueue(queue, RPC_QUEUE_OPTIONS)).then(
    () => false,
    (error: unknown) => {
      if (/PRECONDITION[_-]FAILED/.test(errorMessage(error)) && errorMessage(error).includes("'durable'")) return true;
      throw error;
    },
  );
  if (!durable) return { queue, was: 'transient', moved: 0 };
  const consumers = await withChannel(connection, async (channel) => (await channel.checkQueue(queue)).consumerCount);
  if (consumers > 0) throw new Error(`${queue} has ${consumers} consumer(s): stop the ${queue.split('.')[0]} service before queues:migrate`);
  await withChannel(connection, (channel) => channel.deleteQueue(queue));
  return { queue, was: 'durable', moved: 0 };
}

async function queueExists(connection: ChannelModel, queue: string): Promise<boolean> {
  return withChannel(connection, (channel) => channel.checkQueue(queue)).then(
    () => true,
    (error: unknown) => {
      if (/NOT[_-]FOUND/.test(errorMessage(error))) return false;
      throw error;
    },
  );
}

async function migrateQueue(connection: ChannelModel, queue: string): Promise<QueueMigration> {
  const staging = `${queue}.migrating`;
  const bound = queue === Queues.DeliveryEvents;
  const was = await queueType(connection, queue);
  let moved = 0;
  if (was === 'classic') {
    const consumers = await withChannel(connection, async (channel) => (await channel.checkQueue(queue)).consumerCount);
    if (consumers > 0) {
      throw new Error(
        `${queue} has ${consumers} consumer(s): stop the change-detector and delivery workers (and ingestion) before queues:migrate`,
      );
    }
    await withChannel(connection, async (channel) => {
      await channel.assertQueue(staging, DURABLE_QUEUE);
      if (bound) {
        await channel.bindQueue(staging, Exchanges.AuctionEvents, '#');
        await channel.unbindQueue(queue, Exchanges.AuctionEvents, '#');
      }
    });
    moved = await moveAll(connection, queue, staging);
    // ifEmpty: a message that arrived since (a publisher still running) is never deleted with the queue.
    await withChannel(connection, (channel) => channel.deleteQueue(queue, { ifEmpty: true }));
  }
  if (was !== 'quorum') {
    await withChannel(connection, async (channel) => {
      await channel.assertQueue(queue, DURABLE_QUEUE);
      if (bound) await channel.bindQueue(queue, Exchanges.AuctionEvents, '#');
    });
  }
  // Fill back from the staging queue: this run's, or one a run cut short left behind.
  if ((await queueType(connection, staging)) === 'quorum') {
    if (bound) await withChannel(connection, (channel) => channel.unbindQueue(staging, Exchanges.AuctionEvents, '#'));
    await moveAll(connection, staging, queue);
    // Quorum queues take no if-empty delete: checked just before (nothing routes to it any more).
    await withChannel(connection, async (channel) => {
      const { messageCount } = await channel.checkQueue(staging);
      if (messageCount > 0) throw new Error(`${staging} still holds ${messageCount} message(s); run queues:migrate again`);
      await channel.deleteQueue(staging);
    });
  }
  return { queue, was, moved };
}

/**
 * What the queue is on the broker: a passive check tells whether it exists; a declare with the
 * quorum arguments succeeds on a quorum queue and is refused (PRECONDITION_FAILED on
 * 'x-queue-type') on a classic one. Never creates a queue.
 */
export async function queueType(connection: ChannelModel, queue: string): Promise<QueueType> {
  if (!(await queueExists(connection, queue))) return 'absent';
  return withChannel(connection, (channel) => channel.assertQueue(queue, DURABLE_QUEUE)).then(
    () => 'quorum' as const,
    (error: unknown) => {
      if (/PRECONDITION[_-]FAILED/.test(errorMessage(error)) && errorMessage(error).includes("'x-queue-type'")) return 'classic' as const;
      throw error;
    },
  );
}

/** Moves every message of `from` to `to` with their properties: republished with confirms, then acknowledged. */
async function moveAll(connection: ChannelModel, from: string, to: string): Promise<number> {
  const channel: ConfirmChannel = await connection.createConfirmChannel();
  channel.on('error', () => undefined);
  let moved = 0;
  try {
    for (;;) {
      const batch: GetMessage[] = [];
      while (batch.length < MOVE_BATCH) {
        const message = await channel.get(from, { noAck: false });
        if (message === false) break;
        batch.push(message);
      }
      if (batch.length === 0) return moved;
      for (const message of batch) channel.sendToQueue(to, message.content, publishOptions(message.properties));
      await channel.waitForConfirms();
      channel.ack(batch[batch.length - 1], true);
      moved += batch.length;
    }
  } finally {
    await channel.close().catch(() => undefined);
  }
}

/** A message's properties as they came, for republishing (persistent either way). */
function publishOptions(properties: MessageProperties): Options.Publish {
  const optional = <T>(value: T | null | undefined): T | undefined => value ?? undefined;
  return {
    persistent: true,
    contentType: optional(properties.contentType as string | undefined),
    contentEncoding: optional(properties.contentEncoding as string | undefined),
    headers: optional(properties.headers),
    priority: optional(properties.priority as number | undefined),
    correlationId: optional(properties.correlationId as string | undefined),
    replyTo: optional(properties.replyTo as string | undefined),
    expiration: optional(properties.expiration as string | undefined),
    messageId: optional(properties.messageId as string | undefined),
    timestamp: optional(properties.timestamp as number | undefined),
    type: optional(properties.type as string | undefined),
    appId: optional(properties.appId as string | undefined),
  };
}

/** Runs `work` on a channel of its own (a refused declare closes its channel, never the connection). */
async function withChannel<T>(connection: ChannelModel, work: (channel: Channel) => Promise<T>): Promise<T> {
  const channel = await connection.createChannel();
  let closed = false;
  channel.on('error', () => undefined);
  channel.on('close', () => (closed = true));
  try {
    return await work(channel);
  } finally {
    if (!closed) await channel.close().catch(() => undefined);
  }
}
