export * from './makes.dto';
export * from './pagination.dto';
export * from './auctions.validators';
export * from './auctions.dto';
export * from './bids.dto';
export * from './stats.dto';
