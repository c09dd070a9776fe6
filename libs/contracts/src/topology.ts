/**
 * RabbitMQ topology (README.md, "Architecture"). These names are a wire contract between deployed
 * processes: never rename one in place — add a new name and migrate.
 */
export const Queues = {
  /** Request/response from the gateway to the query service. */
  QueryRpc: 'query.rpc',
  /** Request/response from the gateway to the stats service. */
  StatsRpc: 'stats.rpc',
  /** Request/response from the gateway to the webhooks service. */
  WebhooksRpc: 'webhooks.rpc',
  /** Source observations (docs/api/ingestion.md) for the change-detector. Durable. */
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

/**
 * Queue arguments for the durable queues (`observations`, its dead-letter queue, `delivery.events`):
 * quorum queues, replicated over the nodes of a cluster (on one node, a quorum queue of one). Every
 * process declares them identically; a queue that exists as a classic queue is refused by the broker
 * (PRECONDITION_FAILED, inequivalent arg 'x-queue-type') until it is moved over with
 * `npm run admin -- queues:migrate` (docs/operations.md).
 */
export const DURABLE_QUEUE_ARGUMENTS = { 'x-queue-type': 'quorum' } as const;

/** Requests older than this are dropped by the broker: the gateway has given up on them. */
export const RPC_MESSAGE_TTL_MS = 5000;

/** Queue arguments for the RPC queues; client and server must declare them identically. */
export const RPC_QUEUE_ARGUMENTS = { 'x-message-ttl': RPC_MESSAGE_TTL_MS } as const;

/**
 * How the RPC queues are declared: transient classic queues (their requests live 5 s). On a
 * cluster a transient queue whose node goes away is deleted, and the services declare it again on
 * a node they reach; a durable classic queue would stay unusable until its node came back.
 */
export const RPC_QUEUE_OPTIONS = { durable: false, arguments: RPC_QUEUE_ARGUMENTS } as const;

/**
 * PostgreSQL NOTIFY channels: wire names like the queues' (triggers written by migrations send
 * them, so never rename one in place). Each is a wake-up at commit; a sweep is the backstop.
 */
export const NotifyChannels = {
  /** `accounts` and `api_keys` changed (migration AccountChangeNotify): gateways forget cached keys, the delivery worker re-reads allowances. */
  AccountChanges: 'account_changes',
  /** Aliases, exclusions and makes changed (migration ReferenceChangeNotify): pending observations and make waits are decided again. */
  ReferenceChanges: 'reference_changes',
  /** Deliveries became due: new, retried or recovered (migration DeliveryWorker). */
  DeliveryWakeup: 'delivery_wakeup',
  /** Events were written to the outbox (migration ChangeDetection): the relay publishes them. */
  AuctionEventsOutbox: 'auction_events_outbox',
} as const;
export type NotifyChannel = (typeof NotifyChannels)[keyof typeof NotifyChannels];


/**
 * The payload of `account_changes` (migration AccountChangeNotify): the account, and the key when
 * an API key changed. Null for a payload that is not one (every listener then forgets or checks
 * everything).
 */
export interface AccountChangeNotice {
  accountId: string;
  /** Set when the change was to an API key rather than to the account row. */
  keyHash?: string;
}

export function parseAccountChange(payload: string): AccountChangeNotice | null {
  try {
    const value = JSON.parse(payload) as { account_id?: unknown; key_hash?: unknown };
    if (typeof value.account_id !== 'string') return null;
    return typeof value.key_hash === 'string' ? { accountId: value.account_id, keyHash: value.key_hash } : { accountId: value.account_id };
  } catch {
    return null;
  }
}
