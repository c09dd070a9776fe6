import { Pool, PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/**
 * The pipeline talks to PostgreSQL through the DataSource's own pg pool (one pool per process),
 * with plain pg clients: multi-row statements, RETURNING and named prepared statements without
 * TypeORM's result reshaping.
 */
export function pgPool(dataSource: DataSource): Pool {
  const driver = dataSource.driver;
  if (!(driver instanceof PostgresDriver)) throw new Error('the change-detector needs a PostgreSQL DataSource');
  return driver.master as Pool;
}

/** SQLSTATEs worth retrying: serialization failure, deadlock. */
const RETRYABLE = new Set(['40001', '40P01']);

export function sqlState(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}

/** Errors caused by the data itself (data exceptions, integrity violations): retrying cannot help. */
export function isDataError(error: unknown): boolean {
  const code = sqlState(error);
  return code !== undefined && (code.startsWith('22') || code.startsWith('23'));
}

/**
 * Errors an observation can cause by itself (data errors, and the JavaScript errors a value the
 * code did not foresee may raise): isolating the observation and rejecting it is the cure.
 * Anything else (connection lost, server shutting down) is transient: retry the whole batch.
 */
export function isObservationError(error: unknown): boolean {
  return isDataError(error) || error instanceof TypeError || error instanceof RangeError || error instanceof SyntaxError;
}

/** Runs `work` in one transaction, retrying deadlocks and serialization failures. */
export async function withTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    const client = await pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      const code = sqlState(error);
      if (code !== undefined && RETRYABLE.has(code) && attempt < attempts) {
        await new Promise((resolve) => setTimeout(resolve, 10 * attempt + Math.random() * 20));
        continue;
      }
      throw error;
    } finally {
      client.release(broken ? true : undefined);
    }
  }
}
