export * from './query.module';
// For the query benchmark's bare baseline: the same repositories and SQL without Nest or the broker.
export * from './sql/sql-client';
export * from './auctions/auction-query';
export * from './auctions/auctions.repository';
export * from './auctions/auctions.service';
export * from './bids/bid-query';
export * from './bids/bids.repository';
export * from './bids/bids.service';
