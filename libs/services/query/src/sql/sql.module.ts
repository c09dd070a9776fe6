import { Module } from '@nestjs/common';
import { PG_POOL } from '@cars/persistence';
import { Pool } from 'pg';
import { PgSqlClient, SqlClient } from './sql-client';

/** The query repositories use the process DataSource's own pg pool directly (no TypeORM per query). */
@Module({
  providers: [
    {
      provide: SqlClient,
      inject: [PG_POOL],
      useFactory: (pool: Pool): SqlClient => new PgSqlClient(pool),
    },
  ],
  exports: [SqlClient],
})
export class SqlModule {}
