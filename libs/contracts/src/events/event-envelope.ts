import { randomUUID } from 'node:crypto';

/**
 * Webhook event payloads (docs/api/webhooks.md): the envelope every event shares and the `data` of
 * each type. This is the public wire format sent to subscribers and carried on the
 * `auction.events` exchange; never change a field in place.
 */
export const EVENT_API_VERSION = '2026-10-17' as const;

/** A JSON number that is always a whole number (`integer` in the event catalog's JSON Schema). */
export type Integer = number;

export const EventTypes = {
  AuctionCreated: 'auction.created',
  AuctionUpdated: 'auction.updated',
  AuctionEnded: 'auction.ended',
  BidCreated: 'bid.created',
  WebhookTest: 'webhook.test',
} as const;
export type EventType = (typeof EventTypes)[keyof typeof EventTypes];

/** The types a subscription may select (`webhook.test` is sent on request only). */
export const SUBSCRIBABLE_EVENT_TYPES = [
  EventTypes.AuctionCreated,
  EventTypes.AuctionUpdated,
  EventTypes.AuctionEnded,
  EventTypes.BidCreated,
] as const;
export type SubscribableEventType = (typeof SUBSCRIBABLE_EVENT_TYPES)[number];

/** Source statuses an ended transition starts from, and those it ends in (`auction.ended`). */
export const AUCTION_STARTING_STATUSES = ['active', 'coming soon'] as const;
export const AUCTION_ENDING_STATUSES = ['sold', 'reserve not met', 'result unavailable', 'canceled', 'withdrawn'] as const;

/**
 * `data.auction`: captured source facts at observation time. `id` is the auction's REST id as a
 * string; `status` is the source status (unknown values pass through); `make`/`model` are the
 * values the source listed (the canonical make used for filtering travels in the routing
 * context); `auction_end_at` is the source's wall-clock time without offset (do not assume UTC);
 * `auction_end_date` is the end date (YYYY-MM-DD). Prices are integers. Any field may be null.
 */
export interface EventAuction {
  /** The auction's REST id, as a string (the `id` of `GET /auctions`, the `{auction_id}` of its bids route). */
  id: string | null;
  /** The auction platform (`bringatrailer`, `carsandbids`, …). */
  source: string | null;
  /** The listing's page on the platform. */
  url: string | null;
  title: string | null;
  /** The source status (`active`, `sold`, `reserve not met`, …); unknown values pass through. */
  status: string | null;
  /** Current bid or final price, whole units of `currency`. */
  price: Integer | null;
  currency: string | null;
  year: Integer | null;
  /** As the source listed it (the canonical make used for filtering may differ in spelling). */
  make: string | null;
  model: string | null;
  /** The source's wall-clock end time, `YYYY-MM-DDTHH:MM:SS` without an offset: not UTC. */
  auction_end_at: string | null;
  /** The end date, `YYYY-MM-DD`. */
  auction_end_date: string | null;
  bid_count: Integer | null;
  sale_type: string | null;
  price_type: string | null;
}

/** Fields whose change is meaningful (fires `auction.updated`), by their `data.auction` name. */
export const MEANINGFUL_AUCTION_FIELDS = [
  'title',
  'status',
  'price',
  'currency',
  'year',
  'make',
  'model',
  'auction_end_at',
  'auction_end_date',
  'bid_count',
  'sale_type',
  'price_type',
] as const satisfies readonly (keyof EventAuction)[];
export type MeaningfulAuctionField = (typeof MEANINGFUL_AUCTION_FIELDS)[number];

export interface FieldChange<T> {
  before: T;
  after: T;
}

/** `data.changes`: changed field → {before, after}; empty for a new auction. */
export type AuctionChanges = { [K in MeaningfulAuctionField]?: FieldChange<EventAuction[K]> };

export interface AuctionEventData {
  auction: EventAuction;
  changes: AuctionChanges;
}

/**
 * `data.bid`: the persisted bid row's id and its frozen parent auction id (strings), the amount
 * (integer), currency, and the source's wall-clock bid time without offset. No bidder identity.
 */
export interface EventBid {
  /** The bid's id, as a string. */
  id: string;
  /** The REST id of the auction the bid belongs to, as a string. */
  auction_id: string;
  /** Whole units of `currency`. */
  amount: Integer | null;
  currency: string | null;
  /** The source's wall-clock bid time without an offset: not UTC. */
  bid_at: string | null;
}

export interface BidEventData {
  bid: EventBid;
}

export const WEBHOOK_TEST_MESSAGE = 'This is a test event from the Classic Car Auction Data Service.';

export interface WebhookTestEventData {
  /** Always the text of `WEBHOOK_TEST_MESSAGE`. */
  message: string;
}

export interface EventDataByType {
  'auction.created': AuctionEventData;
  'auction.updated': AuctionEventData;
  'auction.ended': AuctionEventData;
  'bid.created': BidEventData;
  'webhook.test': WebhookTestEventData;
}

/** The envelope of every event. */
export interface EventEnvelope<T extends EventType = EventType> {
  /** Opaque, stable across retries: `evt_` + UUID. */
  id: string;
  type: T;
  api_version: typeof EVENT_API_VERSION;
  /** UTC time the service made the observation (processed it), not a source timestamp. */
  created_at: string;
  data: EventDataByType[T];
}

/** Any event, discriminated by `type`. */
export type AnyEventEnvelope = { [T in EventType]: EventEnvelope<T> }[EventType];
export type AuctionEventEnvelope = EventEnvelope<'auction.created' | 'auction.updated' | 'auction.ended'>;
export type BidEventEnvelope = EventEnvelope<'bid.created'>;

export const EVENT_ID_PREFIX = 'evt_';

export function newEventId(): string {
  return `${EVENT_ID_PREFIX}${randomUUID()}`;
}

export function buildEventEnvelope<T extends EventType>(
  type: T,
  data: EventDataByType[T],
  createdAt: Date,
  id: string = newEventId(),
): EventEnvelope<T> {
  return { id, type, api_version: EVENT_API_VERSION, created_at: createdAt.toISOString(), data };
}
