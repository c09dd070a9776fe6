import { Module } from '@nestjs/common';
import { SqlModule } from '../sql/sql.module';
import { MakesHandler } from './makes.handler';
import { MakesRepository } from './makes.repository';
import { MakesService } from './makes.service';

@Module({
  imports: [SqlModule],
  controllers: [MakesHandler],
  providers: [MakesService, MakesRepository],
})
export class MakesModule {}
