import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  JsonText,
  BidListResponseDto,
  ListBidsRequestDto,
  QueryMessages,
  QueryPatterns,
  RpcReply,
  rpcError,
  validatePlain,
  validationError,
} from '@cars/contracts';
import { BidsService } from './bids.service';

@Controller()
export class BidsHandler {
  constructor(private readonly bids: BidsService) {}

  @MessagePattern(QueryPatterns.ListBids)
  async list(
    @Payload() payload: QueryMessages[typeof QueryPatterns.ListBids]['request'],
  ): Promise<RpcReply<JsonText<BidListResponseDto>>> {
    const input = validatePlain(ListBidsRequestDto, payload);
    if (!input.ok) return rpcError(400, validationError(input.details));
    return this.bids.list(input.value);
  }
}
