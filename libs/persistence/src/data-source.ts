import { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from './migrations';
import { StructuredTypeOrmLogger } from './typeorm-logger';

export interface DataSourceConfig {
  url: string;
  /** Pool size per process. */
  poolSize?: number;
  applicationName?: string;
}

export function dataSourceOptions(config: DataSourceConfig): DataSourceOptions {
  return {
    type: 'postgres',
    url: config.url,
    // No entities (ADR 5): repositories run SQL on the pg pool; TypeORM owns the DataSource and migrations.
    entities: [],
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    logging: ['error', 'warn', 'migration'],
    logger: new StructuredTypeOrmLogger(),
    extra: {
      max: config.poolSize ?? 10,
      application_name: config.applicationName ?? 'cars',
      connectionTimeoutMillis: 5000,
    },
  };
}

export function createDataSource(config: DataSourceConfig): DataSource {
  return new DataSource(dataSourceOptions(config));
}

/**
 * Applies pending migrations under an advisory lock, so concurrent starters do not race.
 * Holds one connection for the lock: the DataSource needs a pool of at least two.
 */
export async function runMigrations(dataSource: DataSource): Promise<void> {
  const runner = dataSource.createQueryRunner();
  try {
    await runner.query('SELECT pg_advisory_lock(727001)');
    await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await runner.query('SELECT pg_advisory_unlock(727001)').catch(() => undefined);
    await runner.release();
  }
}

/** The connection string of a DataSource, for the few connections made beside its pool (ledger, LISTEN). */
export function connectionUrlOf(dataSource: DataSource): string {
  const o = dataSource.options as { url?: string; host?: string; port?: number; username?: string; password?: string; database?: string };
  if (o.url) return o.url;
  const auth = o.username ? `${encodeURIComponent(o.username)}${o.password ? `:${encodeURIComponent(o.password)}` : ''}@` : '';
  return `postgres://${auth}${o.host ?? '127.0.0.1'}:${o.port ?? 5432}/${encodeURIComponent(o.database ?? 'postgres')}`;
}
