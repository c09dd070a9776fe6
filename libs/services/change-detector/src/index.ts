export * from './change-detector.module';
export * from './change-detector.options';
export * from './change-detector.runtime';
export * from './observations/observation.processor';
export * from './observations/ingest-lines';
export * from './observations/decisions';
export {
  AUCTION_COLUMNS,
  buildAuctionRow,
  buildBidRow,
  eventAuction,
  restStatus,
  type AuctionRow,
  type BidRow,
} from './observations/auction-row';
export type { SourceContext } from './normalization/source-context';
export * from './normalization/normalizer';
export * from './normalization/normalization.service';
export * from './outbox/event-publisher';
export * from './outbox/outbox.relay';
export * from './consumer/observation.consumer';
export * from './bulk/bulk-loader';
export * from './pending/pending-replayer';
