import { Controller, UseFilters } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { StatementTimeoutReplies } from '@cars/persistence';
import {
  RpcReply,
  StatsMessages,
  StatsPatterns,
  StatsQueryDto,
  StatsResponse,
  ValidatePayload,
} from '@cars/contracts';
import { PriceStatsService } from './price-stats.service';

type Request<P extends keyof StatsMessages> = StatsMessages[P]['request'];

@Controller()
@UseFilters(StatementTimeoutReplies)
export class PriceStatsHandler {
  constructor(private readonly stats: PriceStatsService) {}

  @MessagePattern(StatsPatterns.GetPriceStats)
  @ValidatePayload(StatsQueryDto)
  async getPriceStats(@Payload() payload: Request<typeof StatsPatterns.GetPriceStats>): Promise<RpcReply<StatsResponse>> {
    return this.stats.getStats(payload);
  }
}
