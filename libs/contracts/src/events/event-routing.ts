/**
 * Routing context carried beside (never inside) the public envelope: what webhook filters match
 * on (`auction_id`, `make`, `source`, combined with AND). `make` is the canonical make (null while
 * unknown), `source` the platform, `auction_id` the auction's id as a string; bid events carry
 * their parent's context.
 */
export interface EventRouting {
  make: string | null;
  source: string | null;
  auction_id: string | null;
}

/**
 * How an event travels on the `auction.events` exchange (routing key = event type), in one of two
 * forms (a consumer reads both: `eventsOfMessage`):
 *
 * One event per message:
 * - body: the envelope as JSON (UTF-8), exactly what subscribers receive;
 * - properties: `messageId` = envelope id, `type` = event type, `contentType` application/json,
 *   persistent;
 * - headers: the routing context below (a header is absent when its value is null), plus the
 *   outbox sequence number (informative: order is not guaranteed across relays).
 *
 * A batch (the relay's default, see `EventBatchItem`): consecutive events of one type in one
 * message, header `x-event-count` = how many, `x-event-seq` = the first one's sequence number.
 */
export const EventHeaders = {
  Make: 'x-event-make',
  Source: 'x-event-source',
  AuctionId: 'x-event-auction-id',
  Seq: 'x-event-seq',
  /** Present on a batch message only: the number of events in its body. */
  Count: 'x-event-count',
} as const;

export function eventRoutingHeaders(routing: EventRouting): Record<string, string> {
  const headers: Record<string, string> = {};
  if (routing.make != null) headers[EventHeaders.Make] = routing.make;
  if (routing.source != null) headers[EventHeaders.Source] = routing.source;
  if (routing.auction_id != null) headers[EventHeaders.AuctionId] = routing.auction_id;
  return headers;
}

export function eventRoutingFromHeaders(headers: Record<string, unknown> | undefined): EventRouting {
  const text = (value: unknown): string | null =>
    typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('utf8') : value == null ? null : String(value);
  return {
    make: text(headers?.[EventHeaders.Make]),
    source: text(headers?.[EventHeaders.Source]),
    auction_id: text(headers?.[EventHeaders.AuctionId]),
  };
}
