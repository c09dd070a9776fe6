import { Module } from '@nestjs/common';
import { readPoolProvider } from '@cars/persistence';
import { loadEnv, ReadServicesEnv } from '@cars/runtime';
import { PriceStatsHandler } from './price-stats.handler';
import { PriceStatsRepository } from './price-stats.repository';
import { PriceStatsService } from './price-stats.service';

@Module({
  controllers: [PriceStatsHandler],
  providers: [
    PriceStatsService,
    PriceStatsRepository,
    readPoolProvider('stats', () => loadEnv(ReadServicesEnv).QUERY_STATEMENT_TIMEOUT_MS),
  ],
})
export class PriceStatsModule {}
