import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSourceConfig, dataSourceOptions } from './data-source';

/** The process's one DataSource, shared by every service module it hosts. */
@Module({})
export class DatabaseModule {
  static forRoot(config: DataSourceConfig): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      imports: [TypeOrmModule.forRoot(dataSourceOptions(config))],
      exports: [TypeOrmModule],
    };
  }
}
