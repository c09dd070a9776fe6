import { Module } from '@nestjs/common';
import { ReadPool, readPoolProvider } from '@cars/persistence';
import { loadEnv, ReadServicesEnv } from '@cars/runtime';
import { PgSqlClient, SqlClient } from './sql-client';

/**
 * The query repositories run on the query service's ReadPool (every statement bounded by
 * QUERY_STATEMENT_TIMEOUT_MS), directly on pg (no TypeORM per query).
 */
@Module({
  providers: [
    readPoolProvider('query', () => loadEnv(ReadServicesEnv).QUERY_STATEMENT_TIMEOUT_MS),
    { provide: SqlClient, inject: [ReadPool], useFactory: (reads: ReadPool): SqlClient => new PgSqlClient(reads.pool) },
  ],
  exports: [SqlClient],
})
export class SqlModule {}
