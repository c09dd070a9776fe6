import { Module } from '@nestjs/common';
import { SqlModule } from '../sql/sql.module';
import { AuctionsHandler } from './auctions.handler';
import { AuctionsRepository } from './auctions.repository';
import { AuctionsService } from './auctions.service';

@Module({
  imports: [SqlModule],
  controllers: [AuctionsHandler],
  providers: [AuctionsService, AuctionsRepository],
})
export class AuctionsModule {}
