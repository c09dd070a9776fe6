import { Controller, UseFilters } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { StatementTimeoutReplies } from '@cars/persistence';
import {
  AuctionListResponseDto,
  JsonText,
  LiveAuctionListResponseDto,
  LiveAuctionsQueryDto,
  QueryMessages,
  QueryPatterns,
  RpcReply,
  SearchAuctionsQueryDto,
  ValidatePayload,
} from '@cars/contracts';
import { AuctionsService } from './auctions.service';

type Request<P extends keyof QueryMessages> = QueryMessages[P]['request'];

/** RPC handlers of the auction routes; payloads are validated again on consume. */
@Controller()
@UseFilters(StatementTimeoutReplies)
export class AuctionsHandler {
  constructor(private readonly auctions: AuctionsService) {}

  @MessagePattern(QueryPatterns.SearchAuctions)
  @ValidatePayload(SearchAuctionsQueryDto)
  async search(
    @Payload() payload: Request<typeof QueryPatterns.SearchAuctions>,
  ): Promise<RpcReply<JsonText<AuctionListResponseDto>>> {
    return this.auctions.search(payload);
  }

  @MessagePattern(QueryPatterns.ListLiveAuctions)
  @ValidatePayload(LiveAuctionsQueryDto)
  async live(
    @Payload() payload: Request<typeof QueryPatterns.ListLiveAuctions>,
  ): Promise<RpcReply<JsonText<LiveAuctionListResponseDto>>> {
    return this.auctions.live(payload);
  }
}
