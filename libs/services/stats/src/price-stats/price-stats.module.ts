import { Module } from '@nestjs/common';
import { PriceStatsHandler } from './price-stats.handler';
import { PriceStatsRepository } from './price-stats.repository';
import { PriceStatsService } from './price-stats.service';

@Module({
  controllers: [PriceStatsHandler],
  providers: [PriceStatsService, PriceStatsRepository],
})
export class PriceStatsModule {}
