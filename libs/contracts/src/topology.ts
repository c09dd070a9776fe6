/**
 * RabbitMQ topology (DESIGN.md §3). These names are a wire contract between deployed processes:
 * never rename one in place — add a new name and migrate.
 */
export const Queues = {
  /** Request/response from the gateway to the query service. */
  QueryRpc: 'query.rpc',
  /** Request/response from the gateway to the stats service. */
  StatsRpc: 'stats.rpc',
  /** Request/response from the gateway to the webhooks service. */
  WebhooksRpc: 'webhooks.rpc',
  /** Source observations (DESIGN.md §7) for the change-detector. Durable. */
  Observations: 'observations',
  /** Observations rejected by validation, with the reason in the `x-rejection-reason` header. */
  ObservationsDeadLetter: 'observations.dead-letter',
  /** Events for the delivery worker, bound to the auction.events exchange. Durable. */
  DeliveryEvents: 'delivery.events',
} as const;
export type QueueName = (typeof Queues)[keyof typeof Queues];

export const Exchanges = {
  /** Durable topic exchange; routing key = event type. */
  AuctionEvents: 'auction.events',
} as const;

/** Requests older than this are dropped by the broker: the gateway has given up on them. */
export const RPC_MESSAGE_TTL_MS = 5000;

/** Queue arguments for the RPC queues; client and server must declare them identically. */
export const RPC_QUEUE_ARGUMENTS = { 'x-message-ttl': RPC_MESSAGE_TTL_MS } as const;
