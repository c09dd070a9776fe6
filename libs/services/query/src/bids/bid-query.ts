import { BidSort, SortDirection } from '@cars/contracts';
import { SqlQuery } from '../auctions/auction-query';
import { BID_FIELDS, jsonFields } from '../auctions/auction.projection';

/** Normalized input of one bids page. `auction_id` is a decimal string (bigint). */
export interface BidsPageRequest {
  auctionId: string;
  bidAfter?: string;
  bidBefore?: string;
  sort: BidSort;
  direction: SortDirection;
  limit: number;
  offset: number;
}

const BID_SORT_COLUMNS: Record<BidSort, string> = {
  bid_at: 'bid_at',
  amount: 'amount',
  created: 'created_at',
};

function where(request: BidsPageRequest, values: unknown[], alias = ''): string {
  values.push(request.auctionId);
  const conditions = [`${alias}auction_id = $1::bigint`];
  if (request.bidAfter !== undefined) {
    values.push(request.bidAfter);
    conditions.push(`${alias}bid_at >= $${values.length}::timestamptz`);
  }
  if (request.bidBefore !== undefined) {
    values.push(request.bidBefore);
    conditions.push(`${alias}bid_at <= $${values.length}::timestamptz`);
  }
  return conditions.join(' AND ');
}

/**
 * One page of an auction's bids (index bids_auction_bid_at_idx finds the auction's bids), each
 * row carrying the exact total (an InitPlan evaluated once). A bid's auction exists (foreign
 * key), so only an empty page needs `bidsTotalQuery`.
 */
export function bidsPageQuery(request: BidsPageRequest): SqlQuery {
  const values: unknown[] = [];
  const conditions = where(request, values, 'b.');
  const total = `(SELECT count(*)::int FROM bids WHERE ${where(request, [], '')}) AS total`;
  const dir = request.direction === 'asc' ? 'ASC' : 'DESC';
  values.push(request.limit, request.offset);
  const text =
    `SELECT row_to_json(item)::text AS item, b.id::text AS id, ${total} FROM bids b CROSS JOIN LATERAL (SELECT ${jsonFields(BID_FIELDS)}) item ` +
    `WHERE ${conditions} ` +
    `ORDER BY b.${BID_SORT_COLUMNS[request.sort]} ${dir} NULLS LAST, b.id ${dir} ` +
    `LIMIT $${values.length - 1} OFFSET $${values.length}`;
  return { text, values };
}

/** Whether the auction exists, and the exact number of its bids matching the filters, in one statement. */
export function bidsTotalQuery(request: BidsPageRequest): SqlQuery {
  const values: unknown[] = [];
  const conditions = where(request, values);
  const text =
    `SELECT EXISTS (SELECT 1 FROM auctions WHERE id = $1::bigint) AS found, ` +
    `(SELECT count(*)::int FROM bids WHERE ${conditions}) AS total`;
  return { text, values };
}
