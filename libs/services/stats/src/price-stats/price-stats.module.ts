import { Module } from '@nestjs/common';
import { readPoolProvider } from '@cars/persistence';
import { readPoolSettings } from '@cars/runtime';
import { PriceStatsHandler } from './price-stats.handler';
import { PriceStatsRepository } from './price-stats.repository';
import { PriceStatsService } from './price-stats.service';

@Module({
  controllers: [PriceStatsHandler],
  providers: [
    PriceStatsService,
    PriceStatsRepository,
    readPoolProvider('stats', readPoolSettings),
  ],
})
export class PriceStatsModule {}
