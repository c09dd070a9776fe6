import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  RpcReply,
  rpcError,
  StatsMessages,
  StatsPatterns,
  StatsQueryDto,
  StatsResponse,
  validatePlain,
  validationError,
} from '@cars/contracts';
import { PriceStatsService } from './price-stats.service';

type Request<P extends keyof StatsMessages> = StatsMessages[P]['request'];

@Controller()
export class PriceStatsHandler {
  constructor(private readonly stats: PriceStatsService) {}

  @MessagePattern(StatsPatterns.GetPriceStats)
  async getPriceStats(@Payload() payload: Request<typeof StatsPatterns.GetPriceStats>): Promise<RpcReply<StatsResponse>> {
    const input = validatePlain(StatsQueryDto, payload);
    if (!input.ok) return rpcError(400, validationError(input.details));
    return this.stats.getStats(input.value);
  }
}
