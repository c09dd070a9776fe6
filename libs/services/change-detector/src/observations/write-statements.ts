import { AUCTION_COLUMN_TYPES, AUCTION_COLUMNS } from './auction-row';

/**
 * The statements that write auctions, bids and their identities, written once for both writers:
 * the pipeline COPYs a batch's auction rows into its connection's staging table and sends its
 * bids as one JSON array (read with `json_to_recordset`, a plain parse, ~30% cheaper than
 * building `jsonb` first); the bulk loader COPYs everything into staging tables. Each builder
 * takes where its rows come from: a FROM item aliased `x`.
 */

/** Columns of an auction row as the upsert reads them (the written columns, then the bidder count). */
export const AUCTION_ROW_TYPES: Readonly<Record<string, string>> = { ...AUCTION_COLUMN_TYPES, unique_bidder_count: 'integer' };

/** Columns of a bid row as the bid insert reads them; `ord` is its position (bid ids follow it). */
export const BID_ROW_TYPES: Readonly<Record<string, string>> = {
  ord: 'int',
  auction_id: 'bigint',
  source: 'text',
  source_bid_id: 'text',
  bidder_name: 'text',
  amount: 'bigint',
  currency: 'char(3)',
  bid_at: 'timestamptz',
  bid_at_local: 'timestamp',
};

/** Rows given as one JSON array in the parameter `param` (e.g. `$1`). */
export function jsonRows(param: string, types: Readonly<Record<string, string>>): string {
  const columns = Object.entries(types).map(([column, type]) => `${column} ${type}`);
  return `json_to_recordset(${param}::json) AS x(${columns.join(', ')})`;
}

const WRITTEN = AUCTION_COLUMNS.join(', ');
const UPDATED = AUCTION_COLUMNS.filter((c) => c !== 'source' && c !== 'source_auction_id');
const COMPARED = AUCTION_COLUMNS.filter((c) => c !== 'observed_at');

/**
 * Inserts or rewrites auction rows (columns of AUCTION_ROW_TYPES). `updated_at` moves only when a
 * compared column changes; a null bidder count keeps the stored one. With `newerOnly`, a stored
 * row is rewritten only by a strictly newer observation (the pipeline decides that in its
 * transaction; the bulk loader lets the statement decide, so a reload writes nothing).
 * Returns `id`, `source`, `source_auction_id` and `inserted` of each row written.
 */
export function upsertAuctionsSql(rows: string, options: { newerOnly?: boolean } = {}): string {
  return `
  INSERT INTO auctions AS a (${WRITTEN}, unique_bidder_count)
  SELECT ${WRITTEN}, unique_bidder_count
  FROM ${rows}
  ON CONFLICT (source, source_auction_id) DO UPDATE SET
    unique_bidder_count = COALESCE(EXCLUDED.unique_bidder_count, a.unique_bidder_count),
    ${UPDATED.map((c) => `${c} = EXCLUDED.${c}`).join(',\n    ')},
    updated_at = CASE
      WHEN (${COMPARED.map((c) => `a.${c}`).join(', ')}) IS DISTINCT FROM (${COMPARED.map((c) => `EXCLUDED.${c}`).join(', ')})
      THEN now() ELSE a.updated_at END${options.newerOnly ? '\n  WHERE a.observed_at < EXCLUDED.observed_at' : ''}
  RETURNING a.id::text AS id, a.source, a.source_auction_id, (a.xmax = 0) AS inserted`;
}

/**
 * Inserts bids (columns of BID_ROW_TYPES) in `ord` order; a bid whose identity is stored is left
 * alone. Returns the new rows: `id`, `source`, `source_bid_id`, `auction_id` (ids as text).
 */
export function insertBidsSql(rows: string): string {
  return `
  INSERT INTO bids (auction_id, source, source_bid_id, bidder_name, amount, currency, bid_at, bid_at_local)
  SELECT auction_id, source, source_bid_id, bidder_name, amount, currency, bid_at, bid_at_local
  FROM ${rows}
  ORDER BY ord
  ON CONFLICT (source, source_bid_id) DO NOTHING
  RETURNING id::text AS id, source, source_bid_id, auction_id::text AS auction_id`;
}

/**
 * Registers the identities of new bids (rows with `source`, `source_bid_id`, `id`, `auction_id`)
 * first seen at `firstSeenAt` (an SQL expression). Returns those seen for the first time ever.
 */
export function registerIdentitiesSql(rows: string, firstSeenAt: string): string {
  return `
  INSERT INTO bid_identities (source, source_bid_id, bid_id, auction_id, first_seen_at)
  SELECT x.source, x.source_bid_id, x.id::bigint, x.auction_id::bigint, ${firstSeenAt}::timestamptz FROM ${rows}
  ON CONFLICT (source, source_bid_id) DO NOTHING
  RETURNING source, source_bid_id`;
}

/** Recounts the distinct bidders of the auctions `auctionIds` (an SQL `bigint[]` expression). */
export function refreshBidderCountsSql(auctionIds: string): string {
  return `
  UPDATE auctions a SET unique_bidder_count = s.n
  FROM (SELECT auction_id, count(DISTINCT bidder_name)::int AS n FROM bids
        WHERE auction_id = ANY(${auctionIds}) GROUP BY auction_id) s
  WHERE a.id = s.auction_id AND a.unique_bidder_count IS DISTINCT FROM s.n`;
}
