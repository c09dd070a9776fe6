/**
 * The generator's observations: the ingestion contract of `@cars/contracts` (docs/api/ingestion.md,
 * "The observation"), with every member present, in the order of that contract.
 */

import type {
  Observation as ObservationContract,
  ObservationAuction as ObservationAuctionContract,
  ObservationBid as ObservationBidContract,
} from '@cars/contracts';

/** An auction as the generator writes it: every member of the contract present. */
export type ObservationAuction = Required<ObservationAuctionContract> & {
  mileage_unit: 'mi' | 'km' | null;
  seller_type: 'private' | 'dealer' | null;
  modifications: string[];
  known_flaws: string[];
  recent_service_history: string[];
  listing_details: string[];
};

/** A bid as the generator writes it: amount, currency and time always known. */
export type ObservationBid = Required<ObservationBidContract> & { amount: number; currency: string; bid_at: string };

/** An observation as the generator writes it (a stricter form of the contract's). */
export interface Observation extends ObservationContract {
  auction?: ObservationAuction;
  bids: ObservationBid[];
}

/** Source statuses of completed (ended) auctions. */
export const ENDED_STATUSES = ['sold', 'reserve not met', 'result unavailable', 'canceled', 'withdrawn'] as const;
/** Source statuses of live auctions. */
export const LIVE_STATUSES = ['active', 'coming soon'] as const;
export type EndedStatus = (typeof ENDED_STATUSES)[number];
export type LiveStatus = (typeof LIVE_STATUSES)[number];
