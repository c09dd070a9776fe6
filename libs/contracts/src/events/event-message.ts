import type { AnyEventEnvelope } from './event-envelope';
import { EventHeaders, EventRouting, eventRoutingFromHeaders } from './event-routing';

/**
 * One event of a batch message on `auction.events` (`EventHeaders`): the body is a JSON array of
 * these, in outbox `seq` order, every event of the message's type (its routing key); the messages
 * of a relay go out in `seq` order too. The envelope is exactly what subscribers receive; the
 * routing context travels beside it, as the headers of a single-event message carry it.
 */
export interface EventBatchItem<E = AnyEventEnvelope> {
  /** The outbox sequence number (a decimal string). */
  seq: string;
  routing: EventRouting;
  event: E;
}

/** Events per batch message the relay publishes by default, and the most a message may carry. */
export const EVENTS_PER_MESSAGE = 250;
export const MAX_EVENTS_PER_MESSAGE = 1000;

/** Size bound of a batch message's body (a batch closes before it; a single larger event goes alone). */
export const MAX_EVENT_BATCH_BYTES = 1024 * 1024;

/** The events a message of `auction.events` carries, in either form. Throws on a body that is not JSON. */
export function eventsOfMessage(content: Buffer, headers: Record<string, unknown> | undefined): EventBatchItem[] {
  if (headers?.[EventHeaders.Count] != null) return JSON.parse(content.toString('utf8')) as EventBatchItem[];
  const seq = headers?.[EventHeaders.Seq];
  return [
    {
      seq: seq == null ? '' : String(seq),
      routing: eventRoutingFromHeaders(headers),
      event: JSON.parse(content.toString('utf8')) as AnyEventEnvelope,
    },
  ];
}
