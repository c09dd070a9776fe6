import type { Channel } from 'amqplib';
import { DURABLE_QUEUE_ARGUMENTS, Exchanges, Queues } from '@cars/contracts';

/** How every process declares the durable queues: quorum queues (see DURABLE_QUEUE_ARGUMENTS). */
export const DURABLE_QUEUE = { durable: true, arguments: DURABLE_QUEUE_ARGUMENTS };

/**
 * The event side of the topology (`libs/contracts/src/topology.ts`), declared identically by every
 * process that touches it: the durable `auction.events` topic exchange (routing key = event type)
 * and the durable (quorum) `delivery.events` queue bound to it with `#`.
 */
export async function assertEventTopology(channel: Channel): Promise<void> {
  await channel.assertExchange(Exchanges.AuctionEvents, 'topic', { durable: true });
  await channel.assertQueue(Queues.DeliveryEvents, DURABLE_QUEUE);
  await channel.bindQueue(Queues.DeliveryEvents, Exchanges.AuctionEvents, '#');
}

/** The ingestion side: the durable (quorum) `observations` queue and its dead-letter queue. */
export async function assertObservationTopology(channel: Channel): Promise<void> {
  await channel.assertQueue(Queues.Observations, DURABLE_QUEUE);
  await channel.assertQueue(Queues.ObservationsDeadLetter, DURABLE_QUEUE);
}
