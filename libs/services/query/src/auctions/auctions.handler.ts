import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  JsonText,
  AuctionListResponseDto,
  LiveAuctionListResponseDto,
  LiveAuctionsQueryDto,
  QueryMessages,
  QueryPatterns,
  RpcReply,
  SearchAuctionsQueryDto,
  rpcError,
  validatePlain,
  validationError,
} from '@cars/contracts';
import { AuctionsService } from './auctions.service';

type Request<P extends keyof QueryMessages> = QueryMessages[P]['request'];

/** RPC handlers of the auction routes; payloads are validated again on consume. */
@Controller()
export class AuctionsHandler {
  constructor(private readonly auctions: AuctionsService) {}

  @MessagePattern(QueryPatterns.SearchAuctions)
  async search(
    @Payload() payload: Request<typeof QueryPatterns.SearchAuctions>,
  ): Promise<RpcReply<JsonText<AuctionListResponseDto>>> {
    const input = validatePlain(SearchAuctionsQueryDto, payload);
    if (!input.ok) return rpcError(400, validationError(input.details));
    return this.auctions.search(input.value);
  }

  @MessagePattern(QueryPatterns.ListLiveAuctions)
  async live(
    @Payload() payload: Request<typeof QueryPatterns.ListLiveAuctions>,
  ): Promise<RpcReply<JsonText<LiveAuctionListResponseDto>>> {
    const input = validatePlain(LiveAuctionsQueryDto, payload);
    if (!input.ok) return rpcError(400, validationError(input.details));
    return this.auctions.live(input.value);
  }
}
