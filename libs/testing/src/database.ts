import { createDataSource, pgPoolOf, runMigrations } from '@cars/persistence';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { createDatabase, dropDatabase } from './test-infra';

/** The run's migrated database (shared by the specs of one run; clean the tables you use). */
export async function openTestDataSource(): Promise<DataSource> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set: run through npm test');
  return createDataSource({ url, poolSize: 4, applicationName: 'test' }).initialize();
}

/**
 * A fresh database of a spec's own (for specs that must not share rows), with migrations.
 * Returns its URL and a function that drops it.
 */
export async function createIsolatedDatabase(suffix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${process.env.TEST_RUN_ID ?? 'cars_test'}_${suffix}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const url = await createDatabase(name);
  const dataSource = createDataSource({ url, poolSize: 2 });
  await dataSource.initialize();
  await runMigrations(dataSource);
  await dataSource.destroy();
  return { url, drop: () => dropDatabase(name) };
}

export async function truncate(dataSource: DataSource, ...tables: string[]): Promise<void> {
  await dataSource.query(`TRUNCATE ${tables.join(', ')} RESTART IDENTITY CASCADE`);
}

/** A spec's own migrated database, opened: its DataSource, that DataSource's pg pool, and `close` (destroy, then drop). */
export async function openIsolatedDatabase(
  suffix: string,
  options: { poolSize?: number } = {},
): Promise<{ url: string; dataSource: DataSource; pool: Pool; close: () => Promise<void> }> {
  const database = await createIsolatedDatabase(suffix);
  const dataSource = await createDataSource({ url: database.url, poolSize: options.poolSize ?? 4, applicationName: 'test' }).initialize();
  return {
    url: database.url,
    dataSource,
    pool: pgPoolOf(dataSource),
    close: async () => {
      await dataSource.destroy();
      await database.drop();
    },
  };
}
