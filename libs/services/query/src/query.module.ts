import { Module } from '@nestjs/common';
import { AuctionsModule } from './auctions/auctions.module';
import { BidsModule } from './bids/bids.module';
import { MakesModule } from './makes/makes.module';

/** The query service: makes, models, auction search, live auctions, bids. */
@Module({
  imports: [MakesModule, AuctionsModule, BidsModule],
})
export class QueryModule {}
