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

export const WebhooksPatterns = {} as const;
