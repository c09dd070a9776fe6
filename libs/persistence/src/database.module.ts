import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DataSourceConfig, dataSourceOptions } from './data-source';
import { PG_POOL, pgPoolOf } from './pg';

/** The process's one DataSource and its pg pool (`PG_POOL`), shared by every service module it hosts. */
@Module({})
export class DatabaseModule {
  static forRoot(config: DataSourceConfig): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      imports: [TypeOrmModule.forRoot(dataSourceOptions(config))],
      providers: [{ provide: PG_POOL, inject: [DataSource], useFactory: pgPoolOf }],
      exports: [TypeOrmModule, PG_POOL],
    };
  }
}
