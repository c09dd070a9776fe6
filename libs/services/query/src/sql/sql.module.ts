import { Module } from '@nestjs/common';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { PgSqlClient, SqlClient } from './sql-client';

/** The query repositories use the process DataSource's own pg pool directly (no TypeORM per query). */
@Module({
  providers: [
    {
      provide: SqlClient,
      inject: [DataSource],
      useFactory: (db: DataSource): SqlClient => {
        if (!(db.driver instanceof PostgresDriver)) throw new Error('the query service needs a PostgreSQL DataSource');
        return new PgSqlClient(db.driver.master as Pool);
      },
    },
  ],
  exports: [SqlClient],
})
export class SqlModule {}
