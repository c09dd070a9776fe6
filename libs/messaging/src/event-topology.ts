import type { Channel } from 'amqplib';
import { Exchanges, Queues } from '@cars/contracts';

/**
 * The event side of the topology (`libs/contracts/src/topology.ts`), declared identically by every
 * process that touches it: the durable `auction.events` topic exchange (routing key = event type)
 * and the durable `delivery.events` queue bound to it with `#`.
 */
export async function assertEventTopology(channel: Channel): Promise<void> {
  await channel.assertExchange(Exchanges.AuctionEvents, 'topic', { durable: true });
  await channel.assertQueue(Queues.DeliveryEvents, { durable: true });
  await channel.bindQueue(Queues.DeliveryEvents, Exchanges.AuctionEvents, '#');
}

/** The ingestion side: the durable `observations` queue and its dead-letter queue. */
export async function assertObservationTopology(channel: Channel): Promise<void> {
  await channel.assertQueue(Queues.Observations, { durable: true });
  await channel.assertQueue(Queues.ObservationsDeadLetter, { durable: true });
}
