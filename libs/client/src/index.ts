export * from './api-types';
export * from './cars-client';
export * from './errors';
export type { CursorPage, NumberedPage } from './paging';
export type { FetchLike, RequestOptions, TransportOptions } from './transport';
export { DEFAULT_MAX_CONFLICT_WAIT_MS, DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_DELAY_MS } from './transport';
export * from './webhook-verifier';
export { EVENT_API_VERSION, EventTypes, SUBSCRIBABLE_EVENT_TYPES } from './generated/events';
export type {
  AnyEventEnvelope,
  AuctionChanges,
  AuctionEventData,
  AuctionEventEnvelope,
  BidEventData,
  BidEventEnvelope,
  EventAuction,
  EventBid,
  EventDataByType,
  EventEnvelope,
  EventType,
  FieldChange,
  SubscribableEventType,
  WebhookTestEventData,
} from './generated/events';
export type { components, operations, paths } from './generated/openapi';
