import { Client, ClientConfig } from 'pg';
import { DataSource, DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from './migrations';
import { StructuredTypeOrmLogger } from './typeorm-logger';

export interface DataSourceConfig {
  url: string;
  /** Pool size per process. */
  poolSize?: number;
  applicationName?: string;
}

/**
 * The connection class of every pg pool here. A pool listens for a connection's errors only while
 * it is idle; a connection checked out and between statements (a transaction waiting for its
 * caller, a bulk load between chunks) whose server goes away would emit 'error' with no listener
 * and end the process. This one has a listener for its whole life: its holder learns of the loss
 * from its next statement, and the pool drops it when it is released.
 */
export class PooledClient extends Client {
  constructor(config?: string | ClientConfig) {
    super(config);
    this.on('error', () => undefined);
  }
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
      Client: PooledClient,
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
