import type {
  Auction,
  AuctionPage,
  Bid,
  BidPage,
  BidsQuery,
  CreatedWebhook,
  CreateWebhookBody,
  ListWebhooksQuery,
  LiveAuction,
  LiveAuctionPage,
  LiveAuctionsQuery,
  Liveness,
  MakeList,
  ModelList,
  Readiness,
  RecoverBody,
  Recovered,
  RotatedSecret,
  SearchAuctionsQuery,
  ServiceIndex,
  Stats,
  StatsQuery,
  UpdateWebhookBody,
  Webhook,
  WebhookDeliveryList,
  WebhookDeliveryResponse,
  WebhookPage,
  WebhookResponse,
} from './api-types';
import type { RateLimitInfo } from './errors';
import { itemsByCursor, itemsByPage } from './paging';
import { ApiRequest, QueryValue, RequestOptions, segment, Transport, TransportOptions } from './transport';

export type CarsClientOptions = TransportOptions;

type Query = Record<string, QueryValue>;

/**
 * A typed client of the Classic Car Auction Data API: one method per route, request and
 * response types generated from the API's OpenAPI document, typed errors (`ApiError` and its
 * subclasses), burst limits (429 with `Retry-After`) waited out and retried, and iterators that
 * follow the pages of list routes to the end.
 *
 * ```ts
 * const cars = new CarsClient({ baseUrl: 'https://api.example.com', apiKey: process.env.CARS_API_KEY });
 * for await (const auction of cars.auctions.searchAll({ make: 'Porsche', model: '911', limit: 100 })) { … }
 * ```
 */
export class CarsClient {
  private readonly transport: Transport;

  constructor(options: CarsClientOptions) {
    this.transport = new Transport(options);
  }

  /** The monthly allowance as the latest counted response reported it (`X-RateLimit-*`). */
  get rateLimit(): RateLimitInfo | undefined {
    return this.transport.rateLimit;
  }

  private send<T>(request: Omit<ApiRequest, 'signal'>, options: RequestOptions | undefined): Promise<T> {
    return this.transport.send<T>({ ...request, signal: options?.signal });
  }

  /** `GET /`: the service's name, version and documentation links (public). */
  index(options?: RequestOptions): Promise<ServiceIndex> {
    return this.send({ method: 'GET', path: '/', authenticated: false }, options);
  }

  readonly health = {
    /** `GET /health/live` (public). */
    live: (options?: RequestOptions): Promise<Liveness> => this.send({ method: 'GET', path: '/health/live', authenticated: false }, options),
    /** `GET /health/ready` (public): `status` is `ok` or `unavailable` (the latter answered with 503). */
    ready: (options?: RequestOptions): Promise<Readiness> =>
      this.send({ method: 'GET', path: '/health/ready', authenticated: false, accept: [503] }, options),
  };

  /** `GET /makes`: the exact values of the `make` parameter (public, not counted). */
  makes(options?: RequestOptions): Promise<MakeList> {
    return this.send({ method: 'GET', path: '/makes', authenticated: false }, options);
  }

  /** `GET /models?make=…`: the exact values of the `model` parameter for a make (public, not counted). */
  models(make: string, options?: RequestOptions): Promise<ModelList> {
    return this.send({ method: 'GET', path: '/models', query: { make }, authenticated: false }, options);
  }

  readonly auctions = {
    /** `GET /auctions`: one page of completed auctions (counted). */
    search: (query: SearchAuctionsQuery = {}, options?: RequestOptions): Promise<AuctionPage> =>
      this.send({ method: 'GET', path: '/auctions', query: query as Query, authenticated: true }, options),

    /** Every completed auction matching the query, following `meta.next_cursor` (each page counted). */
    searchAll: (query: SearchAuctionsQuery = {}, options?: RequestOptions): AsyncGenerator<Auction, void, undefined> =>
      itemsByCursor(query, (q) => this.auctions.search(q, options)),

    /** `GET /auctions/live`: one page of live auctions (counted). */
    live: (query: LiveAuctionsQuery = {}, options?: RequestOptions): Promise<LiveAuctionPage> =>
      this.send({ method: 'GET', path: '/auctions/live', query: query as Query, authenticated: true }, options),

    /** Every live auction matching the query, following `meta.next_cursor` (each page counted). */
    liveAll: (query: LiveAuctionsQuery = {}, options?: RequestOptions): AsyncGenerator<LiveAuction, void, undefined> =>
      itemsByCursor(query, (q) => this.auctions.live(q, options)),

    /** `GET /auctions/{auction_id}/bids`: one page of an auction's bids (counted). */
    bids: (auctionId: number | string, query: BidsQuery = {}, options?: RequestOptions): Promise<BidPage> =>
      this.send({ method: 'GET', path: `/auctions/${segment(auctionId)}/bids`, query: query as Query, authenticated: true }, options),

    /** Every bid of an auction matching the query, following `meta.next_cursor` (each page counted). */
    bidsAll: (auctionId: number | string, query: BidsQuery = {}, options?: RequestOptions): AsyncGenerator<Bid, void, undefined> =>
      itemsByCursor(query, (q) => this.auctions.bids(auctionId, q, options)),
  };

  /** `GET /stats`: pricing statistics and the 12-month trend (paid plans; counted). */
  stats(query: StatsQuery, options?: RequestOptions): Promise<Stats> {
    return this.send({ method: 'GET', path: '/stats', query: query as Query, authenticated: true }, options);
  }

  readonly webhooks = {
    /** `GET /webhooks`: one page of the account's webhooks, newest first. */
    list: (query: ListWebhooksQuery = {}, options?: RequestOptions): Promise<WebhookPage> =>
      this.send({ method: 'GET', path: '/webhooks', query: query as Query, authenticated: true }, options),

    /** Every webhook of the account, page after page. */
    listAll: (query: ListWebhooksQuery = {}, options?: RequestOptions): AsyncGenerator<Webhook, void, undefined> =>
      itemsByPage(query, (q) => this.webhooks.list(q, options)),

    /** `POST /webhooks`: the new webhook and its signing secret (store it: it is not shown again). */
    create: (body: CreateWebhookBody, options?: RequestOptions): Promise<CreatedWebhook> =>
      this.send({ method: 'POST', path: '/webhooks', body, authenticated: true }, options),

    /** `GET /webhooks/{id}`. */
    get: (id: string, options?: RequestOptions): Promise<WebhookResponse> =>
      this.send({ method: 'GET', path: `/webhooks/${segment(id)}`, authenticated: true }, options),

    /** `PATCH /webhooks/{id}`: edit, pause (`enabled: false`) or resume (`enabled: true`). */
    update: (id: string, body: UpdateWebhookBody, options?: RequestOptions): Promise<WebhookResponse> =>
      this.send({ method: 'PATCH', path: `/webhooks/${segment(id)}`, body, authenticated: true }, options),

    /**
     * `DELETE /webhooks/{id}`: the webhook and its delivery history. While a delivery attempt to it
     * is in flight (e.g. right after `sendTest`) the API answers 409 with `Retry-After`: the client
     * waits and sends again, up to `maxConflictWaitMs` (30 s) in all, then throws the ConflictError.
     */
    delete: async (id: string, options?: RequestOptions): Promise<void> => {
      await this.send<undefined>({ method: 'DELETE', path: `/webhooks/${segment(id)}`, authenticated: true, waitOutConflict: true }, options);
    },

    /** `POST /webhooks/{id}/test`: queues a `webhook.test` event (one per endpoint per minute). */
    sendTest: (id: string, options?: RequestOptions): Promise<WebhookDeliveryResponse> =>
      this.send({ method: 'POST', path: `/webhooks/${segment(id)}/test`, authenticated: true }, options),

    /** `POST /webhooks/{id}/secret/rotate`: a new signing secret; the previous one also signs for 24 hours. */
    rotateSecret: (id: string, options?: RequestOptions): Promise<RotatedSecret> =>
      this.send({ method: 'POST', path: `/webhooks/${segment(id)}/secret/rotate`, authenticated: true }, options),

    /** `GET /webhooks/{id}/deliveries`: the 20 most recent deliveries, newest first. */
    deliveries: (id: string, options?: RequestOptions): Promise<WebhookDeliveryList> =>
      this.send({ method: 'GET', path: `/webhooks/${segment(id)}/deliveries`, authenticated: true }, options),

    /** `POST /webhooks/{id}/deliveries/{deliveryId}/retry`: sends a failed delivery again with a new budget of six attempts. */
    retryDelivery: (id: string, deliveryId: string, options?: RequestOptions): Promise<WebhookDeliveryResponse> =>
      this.send({ method: 'POST', path: `/webhooks/${segment(id)}/deliveries/${segment(deliveryId)}/retry`, authenticated: true }, options),

    /** `POST /webhooks/{id}/recover`: every failed delivery created in `[since, until)` sent again. */
    recover: (id: string, body: RecoverBody, options?: RequestOptions): Promise<Recovered> =>
      this.send({ method: 'POST', path: `/webhooks/${segment(id)}/recover`, body, authenticated: true }, options),
  };
}
