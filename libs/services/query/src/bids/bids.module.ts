import { Module } from '@nestjs/common';
import { SqlModule } from '../sql/sql.module';
import { BidsHandler } from './bids.handler';
import { BidsRepository } from './bids.repository';
import { BidsService } from './bids.service';

@Module({
  imports: [SqlModule],
  controllers: [BidsHandler],
  providers: [BidsService, BidsRepository],
})
export class BidsModule {}
