import { DynamicModule, Module } from '@nestjs/common';
import { withStatementTimeout } from '@cars/persistence';
import { PriceStatsModule } from './price-stats/price-stats.module';

/**
 * The stats service: pricing statistics with a 12-month trend (GET /stats). Its statements run on
 * its ReadPool, bounded by QUERY_STATEMENT_TIMEOUT_MS (a stopped one answers 503).
 */
@Module({
  imports: [PriceStatsModule],
})
export class StatsModule {
  /** With the statement timeout set in code instead of the environment (tests). */
  static forRoot(settings: { statementTimeoutMs: number }): DynamicModule {
    return withStatementTimeout(StatsModule, settings.statementTimeoutMs);
  }
}
