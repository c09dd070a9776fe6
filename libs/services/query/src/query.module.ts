import { DynamicModule, Module } from '@nestjs/common';
import { withStatementTimeout } from '@cars/persistence';
import { AuctionsModule } from './auctions/auctions.module';
import { BidsModule } from './bids/bids.module';
import { MakesModule } from './makes/makes.module';

/**
 * The query service: makes, models, auction search, live auctions, bids. Every statement runs on
 * its ReadPool, bounded by QUERY_STATEMENT_TIMEOUT_MS (a stopped one answers 503).
 */
@Module({
  imports: [MakesModule, AuctionsModule, BidsModule],
})
export class QueryModule {
  /** With the statement timeout set in code instead of the environment (tests). */
  static forRoot(settings: { statementTimeoutMs: number }): DynamicModule {
    return withStatementTimeout(QueryModule, settings.statementTimeoutMs);
  }
}
