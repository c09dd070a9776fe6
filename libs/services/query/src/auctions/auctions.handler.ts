import { Controller, UseInterceptors } from '@nestjs/common';
import { Ctx, MessagePattern, Payload, RmqContext } from '@nestjs/microservices';
import { StatementTimeoutReplies } from '@cars/persistence';
import {
  AuctionDto,
  LiveAuctionDto,
  LiveAuctionsQueryDto,
  QueryMessages,
  QueryPatterns,
  RpcReply,
  SearchAuctionsQueryDto,
  ValidatePayload,
} from '@cars/contracts';
import { PageValue } from './auction.projection';
import { AuctionsService } from './auctions.service';
import { itemFormOf } from './item-form';

type Request<P extends keyof QueryMessages> = QueryMessages[P]['request'];

/** RPC handlers of the auction routes; payloads are validated again on consume. Pages: see itemFormOf. */
@Controller()
@UseInterceptors(StatementTimeoutReplies)
export class AuctionsHandler {
  constructor(private readonly auctions: AuctionsService) {}

  @MessagePattern(QueryPatterns.SearchAuctions)
  @ValidatePayload(SearchAuctionsQueryDto)
  async search(
    @Payload() payload: Request<typeof QueryPatterns.SearchAuctions>,
    @Ctx() context?: RmqContext,
  ): Promise<RpcReply<PageValue<AuctionDto>>> {
    return this.auctions.search(payload, itemFormOf(context));
  }

  @MessagePattern(QueryPatterns.ListLiveAuctions)
  @ValidatePayload(LiveAuctionsQueryDto)
  async live(
    @Payload() payload: Request<typeof QueryPatterns.ListLiveAuctions>,
    @Ctx() context?: RmqContext,
  ): Promise<RpcReply<PageValue<LiveAuctionDto>>> {
    return this.auctions.live(payload, itemFormOf(context));
  }
}
