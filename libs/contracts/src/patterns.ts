/**
 * Message patterns carried over the RPC queues. Like queue names they are a wire contract.
 * The request and reply type of each pattern is declared in `messages/`.
 */
export const QueryPatterns = {
  ListMakes: 'query.makes.list',
  ListModels: 'query.models.list',
  SearchAuctions: 'query.auctions.search',
  ListLiveAuctions: 'query.auctions.live',
  ListBids: 'query.bids.list',
} as const;

export const StatsPatterns = {
  GetPriceStats: 'stats.prices.get',
} as const;

export const WebhooksPatterns = {
  List: 'webhooks.subscriptions.list',
  Create: 'webhooks.subscriptions.create',
  Get: 'webhooks.subscriptions.get',
  Update: 'webhooks.subscriptions.update',
  Delete: 'webhooks.subscriptions.delete',
  SendTest: 'webhooks.subscriptions.test',
  RotateSecret: 'webhooks.subscriptions.rotate-secret',
  ListDeliveries: 'webhooks.deliveries.list',
  RetryDelivery: 'webhooks.deliveries.retry',
  Recover: 'webhooks.deliveries.recover',
} as const;
