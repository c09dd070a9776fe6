import { Injectable } from '@nestjs/common';
import {
  BIDS_DEFAULT_LIMIT,
  BidDto,
  BidListResponseDto,
  JsonText,
  ListBidsRequestDto,
  RpcReply,
  notFound,
  rpcError,
  rpcOk,
  validationError,
} from '@cars/contracts';
import { pageJson } from '../auctions/auction.projection';
import { decodeCursor, encodeCursor, INVALID_CURSOR } from '../auctions/cursor';
import { BidsRepository } from './bids.repository';

/** `2026-01-31` (a date) means 00:00 UTC that day. */
const instant = (value: string | null | undefined): string | undefined =>
  value == null ? undefined : /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value;

/** GET /auctions/{auction_id}/bids: one auction's bids, 404 when the auction does not exist. */
@Injectable()
export class BidsService {
  constructor(private readonly repository: BidsRepository) {}

  async list(input: ListBidsRequestDto): Promise<RpcReply<JsonText<BidListResponseDto>>> {
    const limit = input.limit ?? BIDS_DEFAULT_LIMIT;
    const filters = {
      auctionId: input.auction_id,
      bidAfter: instant(input.bid_after),
      bidBefore: instant(input.bid_before),
      sort: input.sort ?? 'bid_at',
      direction: input.direction ?? 'asc',
    } as const;
    // A bid cursor holds the position of the next page, bound to the auction, filters and order.
    const cursorKey = JSON.stringify(['bids', filters]);
    const cursorMode = input.pagination === 'cursor' || input.cursor != null;
    const position = input.cursor == null ? undefined : decodeCursor(input.cursor, cursorKey);
    if (position === null) return rpcError(400, validationError({ cursor: [INVALID_CURSOR] }));
    const offset = position?.offset ?? ((input.page ?? 1) - 1) * limit;
    const request = { ...filters, limit, offset };
    const rows = await this.repository.page(request);
    let total = rows[0]?.total;
    if (total === undefined) {
      const counted = await this.repository.total(request);
      if (!counted.found) return rpcError(404, notFound(`No auction with id ${input.auction_id}`));
      total = counted.total;
    }
    const hasMore = offset + rows.length < total;
    const last = rows[rows.length - 1];
    const meta = {
      total,
      page: cursorMode ? Math.floor(offset / limit) + 1 : (input.page ?? 1),
      limit,
      total_pages: Math.ceil(total / limit),
      has_more: hasMore,
      next_cursor: hasMore && last ? encodeCursor({ key: null, id: last.id, offset: offset + rows.length }, cursorKey) : null,
    };
    return rpcOk(pageJson<BidDto>(rows.map((row) => row.item), meta));
  }
}
