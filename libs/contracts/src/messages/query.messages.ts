import {
  AuctionListResponseDto,
  BidListResponseDto,
  JsonText,
  ListBidsRequestDto,
  LiveAuctionListResponseDto,
  LiveAuctionsQueryDto,
  NameListResponse,
  SearchAuctionsQueryDto,
} from '../dto';
import { QueryPatterns } from '../patterns';

/** Request and reply types of every query-service pattern, checked by the compiler on both ends. */
export interface QueryMessages {
  [QueryPatterns.ListMakes]: { request: Record<string, never>; reply: NameListResponse };
  [QueryPatterns.ListModels]: { request: { make: string }; reply: NameListResponse };
  /** The validated query of GET /auctions (validated again on consume) → the response body as JSON text. */
  [QueryPatterns.SearchAuctions]: { request: SearchAuctionsQueryDto; reply: JsonText<AuctionListResponseDto> };
  /** The validated query of GET /auctions/live → the response body as JSON text. */
  [QueryPatterns.ListLiveAuctions]: { request: LiveAuctionsQueryDto; reply: JsonText<LiveAuctionListResponseDto> };
  /** GET /auctions/{auction_id}/bids: path id (decimal string, bigint) plus query → JSON text. */
  [QueryPatterns.ListBids]: { request: ListBidsRequestDto; reply: JsonText<BidListResponseDto> };
}
