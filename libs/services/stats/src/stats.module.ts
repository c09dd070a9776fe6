import { Module } from '@nestjs/common';
import { PriceStatsModule } from './price-stats/price-stats.module';

/** The stats service: pricing statistics with a 12-month trend (GET /stats). */
@Module({
  imports: [PriceStatsModule],
})
export class StatsModule {}
