/**
 * The in-memory keys of the write path. The auction key is also what `lockKeys` hashes into the
 * advisory lock of an auction, so every process must spell it the same way (PostgreSQL text
 * cannot hold `\u0000`, hence the unit separator).
 */

/** A source auction: its source and its id there. */
export const auctionKey = (source: string, sourceAuctionId: string): string => `${source}\u001f${sourceAuctionId}`;

/** A bid of a batch: its source id under its stored auction. */
export const bidKey = (bid: { source_bid_id: string; auction_id: string }): string => `${bid.source_bid_id}\u0000${bid.auction_id}`;

/** A bid's identity across its source (what `bid_identities` keeps). */
export const identityKey = (bid: { source: string; source_bid_id: string }): string => `${bid.source}\u0000${bid.source_bid_id}`;
