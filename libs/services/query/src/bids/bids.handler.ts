import { Controller, UseInterceptors } from '@nestjs/common';
import { Ctx, MessagePattern, Payload, RmqContext } from '@nestjs/microservices';
import { StatementTimeoutReplies } from '@cars/persistence';
import {
  BidDto,
  ListBidsRequestDto,
  QueryMessages,
  QueryPatterns,
  RpcReply,
  ValidatePayload,
} from '@cars/contracts';
import { PageValue } from '../auctions/auction.projection';
import { itemFormOf } from '../auctions/item-form';
import { BidsService } from './bids.service';

@Controller()
@UseInterceptors(StatementTimeoutReplies)
export class BidsHandler {
  constructor(private readonly bids: BidsService) {}

  @MessagePattern(QueryPatterns.ListBids)
  @ValidatePayload(ListBidsRequestDto)
  async list(
    @Payload() payload: QueryMessages[typeof QueryPatterns.ListBids]['request'],
    @Ctx() context?: RmqContext,
  ): Promise<RpcReply<PageValue<BidDto>>> {
    return this.bids.list(payload, itemFormOf(context));
  }
}
