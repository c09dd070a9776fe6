import { Module } from '@nestjs/common';
import { MakesHandler } from './makes.handler';
import { MakesRepository } from './makes.repository';
import { MakesService } from './makes.service';

@Module({
  controllers: [MakesHandler],
  providers: [MakesService, MakesRepository],
})
export class MakesModule {}
