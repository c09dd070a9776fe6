import { EventHeaders, eventRoutingHeaders } from '@cars/contracts';
import type { OutboxEvent } from './event-publisher';

/** One message for `auction.events`: its routing key (the event type), body and headers. */
export interface EventMessage {
  type: string;
  body: Buffer;
  /** Envelope id for a single-event message; none for a batch. */
  messageId: string | undefined;
  /** When the (first) event was observed, in seconds. */
  timestamp: number;
  headers: Record<string, unknown>;
  /** How many events it carries. */
  count: number;
}

export interface EventPacking {
  /** Events per message at most (1: one event per message, the single-event form). */
  maxEvents: number;
  /** Body size at most (a single larger event goes alone). */
  maxBytes: number;
}

/**
 * The messages for a relay batch (events in `seq` order), pure: with `maxEvents` 1 one message
 * per event (body = envelope, routing context in headers); otherwise consecutive events of one
 * type share a message (contracts `EventBatchItem`), so the messages stay in `seq` order and each
 * keeps its type as routing key. A message closes at `maxEvents` or before passing `maxBytes`.
 */
export function packEvents(events: readonly OutboxEvent[], packing: EventPacking): EventMessage[] {
  if (packing.maxEvents <= 1) return events.map(singleMessage);
  const messages: EventMessage[] = [];
  let run: string[] = [];
  let first: OutboxEvent | undefined;
  let bytes = 0;
  const close = () => {
    if (!first) return;
    messages.push(batchMessage(first, run));
    run = [];
    first = undefined;
    bytes = 0;
  };
  for (const event of events) {
    const item = batchItem(event);
    const itemBytes = Buffer.byteLength(item) + 1;
    if (first && (first.type !== event.type || run.length >= packing.maxEvents || bytes + itemBytes + 1 > packing.maxBytes)) close();
    first ??= event;
    run.push(item);
    bytes += itemBytes;
  }
  close();
  return messages;
}

function singleMessage(event: OutboxEvent): EventMessage {
  return {
    type: event.type,
    body: Buffer.from(event.body),
    messageId: event.id,
    timestamp: seconds(event.createdAt),
    headers: { ...eventRoutingHeaders(event.routing), [EventHeaders.Seq]: event.seq },
    count: 1,
  };
}

/** The envelope's text is put in as written (never parsed and serialized again). */
function batchItem(event: OutboxEvent): string {
  return `{"seq":${JSON.stringify(event.seq)},"routing":${JSON.stringify(event.routing)},"event":${event.body}}`;
}

function batchMessage(first: OutboxEvent, items: readonly string[]): EventMessage {
  return {
    type: first.type,
    body: Buffer.from(`[${items.join(',')}]`),
    messageId: undefined,
    timestamp: seconds(first.createdAt),
    headers: { [EventHeaders.Count]: items.length, [EventHeaders.Seq]: first.seq },
    count: items.length,
  };
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);
