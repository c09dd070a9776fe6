import type { AnyEventEnvelope } from './generated/events';
import type { paths } from './generated/openapi';

/**
 * Names for the request and response types of every route, each taken from the generated
 * OpenAPI types by path and method (never written by hand): a change of the document changes
 * them, and a route or member that disappears breaks the compilation of whatever used it.
 */
type Method = 'get' | 'post' | 'patch' | 'delete';
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;

/** The query parameters of a route (`{}` when it has none). */
export type QueryOf<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { parameters: { query?: infer Q } } ? ([Q] extends [never | undefined] ? Record<string, never> : NonNullable<Q>) : never;

/** The JSON request body of a route. */
export type BodyOf<P extends keyof paths, M extends Method> =
  Operation<P, M> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

/** The JSON body of a route's response with status `S`. */
export type ResponseOf<P extends keyof paths, M extends Method, S extends number> =
  Operation<P, M>['responses'] extends { [K in S]: { content: { 'application/json': infer R } } } ? R : never;

// Public routes
export type ServiceIndex = ResponseOf<'/', 'get', 200>;
export type Liveness = ResponseOf<'/health/live', 'get', 200>;
/** 200 when ready, 503 (same shape, `status: "unavailable"`) when not. */
export type Readiness = ResponseOf<'/health/ready', 'get', 200>;
export type MakeList = ResponseOf<'/makes', 'get', 200>;
export type ModelsQuery = QueryOf<'/models', 'get'>;
export type ModelList = ResponseOf<'/models', 'get', 200>;

// Query API
export type SearchAuctionsQuery = QueryOf<'/auctions', 'get'>;
export type AuctionPage = ResponseOf<'/auctions', 'get', 200>;
export type Auction = AuctionPage['data'][number];
export type PageMeta = AuctionPage['meta'];

export type LiveAuctionsQuery = QueryOf<'/auctions/live', 'get'>;
export type LiveAuctionPage = ResponseOf<'/auctions/live', 'get', 200>;
export type LiveAuction = LiveAuctionPage['data'][number];

export type BidsQuery = QueryOf<'/auctions/{auction_id}/bids', 'get'>;
export type BidPage = ResponseOf<'/auctions/{auction_id}/bids', 'get', 200>;
export type Bid = BidPage['data'][number];

export type StatsQuery = QueryOf<'/stats', 'get'>;
export type Stats = ResponseOf<'/stats', 'get', 200>;

// Webhooks
export type ListWebhooksQuery = QueryOf<'/webhooks', 'get'>;
export type WebhookPage = ResponseOf<'/webhooks', 'get', 200>;
export type Webhook = WebhookPage['data'][number];
export type CreateWebhookBody = BodyOf<'/webhooks', 'post'>;
/** The new webhook and its signing secret (shown here and at rotation only). */
export type CreatedWebhook = ResponseOf<'/webhooks', 'post', 201>;
export type WebhookResponse = ResponseOf<'/webhooks/{id}', 'get', 200>;
export type UpdateWebhookBody = BodyOf<'/webhooks/{id}', 'patch'>;
export type RotatedSecret = ResponseOf<'/webhooks/{id}/secret/rotate', 'post', 200>;
export type RecoverBody = BodyOf<'/webhooks/{id}/recover', 'post'>;
export type Recovered = ResponseOf<'/webhooks/{id}/recover', 'post', 202>;

type DocumentedDelivery = ResponseOf<'/webhooks/{id}/deliveries', 'get', 200>['data'][number];
/** A delivery record; its `payload` is the event exactly as it is or was sent. */
export type WebhookDelivery = Omit<DocumentedDelivery, 'payload'> & { payload: AnyEventEnvelope };
export type WebhookDeliveryResponse = Omit<ResponseOf<'/webhooks/{id}/test', 'post', 202>, 'data'> & { data: WebhookDelivery };
export type WebhookDeliveryList = Omit<ResponseOf<'/webhooks/{id}/deliveries', 'get', 200>, 'data'> & { data: WebhookDelivery[] };

/** The error body every route answers with (`details` on 400 only). */
export type ErrorBody = ResponseOf<'/auctions', 'get', 400>;
