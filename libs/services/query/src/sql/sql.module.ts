import { Module } from '@nestjs/common';
import { CostlyTurns, ReadPool, readPoolProvider } from '@cars/persistence';
import { readPoolSettings } from '@cars/runtime';
import { PgSqlClient, SqlClient } from './sql-client';

/**
 * The query repositories run on the query service's ReadPool (every statement bounded by
 * QUERY_STATEMENT_TIMEOUT_MS), directly on pg (no TypeORM per query).
 */
@Module({
  providers: [
    readPoolProvider('query', readPoolSettings),
    { provide: SqlClient, inject: [ReadPool], useFactory: (reads: ReadPool): SqlClient => new PgSqlClient(reads.pool) },
    // One costly statement at a time per process, waiting at most as long as a statement may run.
    { provide: CostlyTurns, inject: [ReadPool], useFactory: (reads: ReadPool) => new CostlyTurns(1, reads.statementTimeoutMs) },
  ],
  exports: [SqlClient, CostlyTurns],
})
export class SqlModule {}
