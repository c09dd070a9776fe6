import { Controller, UseFilters } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { StatementTimeoutReplies } from '@cars/persistence';
import {
  BidListResponseDto,
  JsonText,
  ListBidsRequestDto,
  QueryMessages,
  QueryPatterns,
  RpcReply,
  ValidatePayload,
} from '@cars/contracts';
import { BidsService } from './bids.service';

@Controller()
@UseFilters(StatementTimeoutReplies)
export class BidsHandler {
  constructor(private readonly bids: BidsService) {}

  @MessagePattern(QueryPatterns.ListBids)
  @ValidatePayload(ListBidsRequestDto)
  async list(
    @Payload() payload: QueryMessages[typeof QueryPatterns.ListBids]['request'],
  ): Promise<RpcReply<JsonText<BidListResponseDto>>> {
    return this.bids.list(payload);
  }
}
