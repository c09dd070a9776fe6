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
} from '@cars/contracts';
import { pageJson } from '../auctions/auction.projection';
import { BidsRepository } from './bids.repository';

/** `2026-01-31` (a date) means 00:00 UTC that day. */
const instant = (value: string | null | undefined): string | undefined =>
  value == null ? undefined : /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value;

/** GET /auctions/{auction_id}/bids: one auction's bids, 404 when the auction does not exist. */
@Injectable()
export class BidsService {
  constructor(private readonly repository: BidsRepository) {}

  async list(input: ListBidsRequestDto): Promise<RpcReply<JsonText<BidListResponseDto>>> {
    const page = input.page ?? 1;
    const limit = input.limit ?? BIDS_DEFAULT_LIMIT;
    const request = {
      auctionId: input.auction_id,
      bidAfter: instant(input.bid_after),
      bidBefore: instant(input.bid_before),
      sort: input.sort ?? 'bid_at',
      direction: input.direction ?? 'asc',
      limit,
      offset: (page - 1) * limit,
    } as const;
    const rows = await this.repository.page(request);
    let total = rows[0]?.total;
    if (total === undefined) {
      const counted = await this.repository.total(request);
      if (!counted.found) return rpcError(404, notFound(`No auction with id ${input.auction_id}`));
      total = counted.total;
    }
    return rpcOk(pageJson<BidDto>(rows.map((row) => row.item), { total, page, limit, total_pages: Math.ceil(total / limit) }));
  }
}
