import { Pool, PoolClient } from 'pg';
import { DataSource } from 'typeorm';

/**
 * The one way services reach PostgreSQL below TypeORM: the process DataSource's own pg pool (one
 * pool per process), one transaction helper, and the SQL error helpers. Repositories run plain
 * parameterized statements on it — multi-row statements, RETURNING and named prepared statements
 * without TypeORM's result reshaping.
 */
export function pgPoolOf(dataSource: DataSource): Pool {
  const pool = (dataSource.driver as unknown as { master?: unknown }).master;
  if (dataSource.options.type !== 'postgres' || !(pool instanceof Pool)) {
    throw new Error('a PostgreSQL DataSource, initialized, is required');
  }
  return pool;
}

/** The pg pool of the process DataSource, for injection (provided by DatabaseModule). */
export const PG_POOL = Symbol('PG_POOL');

/**
 * Where a statement runs: a pg pool (each statement on any connection, or a transaction of its
 * own), or the client of a transaction the caller holds. Every repository and rule takes one.
 */
export type Sql = Pool | PoolClient;

/**
 * A statement's text, or its text with a name: a named statement is prepared once per connection
 * and its plan cached (PostgreSQL settles on a generic plan after a few executions when that costs
 * no more), where an unnamed one is parsed and planned at every call. Name the statements of hot
 * paths; one name, one text.
 */
export type Statement = string | { name: string; text: string };

/** The rows of one parameterized statement, typed (an UPDATE returns rows with RETURNING). */
export async function rows<T>(db: Sql, statement: Statement, params: readonly unknown[] = []): Promise<T[]> {
  const result =
    typeof statement === 'string'
      ? await db.query(statement, [...params])
      : await db.query({ name: statement.name, text: statement.text, values: [...params] });
  return result.rows as T[];
}

/** The first row of one statement, or null. */
export async function firstRow<T>(db: Sql, statement: Statement, params: readonly unknown[] = []): Promise<T | null> {
  return (await rows<T>(db, statement, params))[0] ?? null;
}

/**
 * A transaction setting (`TransactionOptions.settings`) for work that finds its rows by key — a
 * batch's auctions, events by `seq`, deliveries by id: no sequential scan of a table an index can
 * serve. Such statements are named, so their plan is made once per connection and kept (a generic
 * plan): made while a table was small — a new database, or between two of autovacuum's analyses —
 * it reads the whole table, and goes on reading it as the table grows (1.5 ms per change-detector
 * batch at 6,000 auctions, growing with every auction, where the index takes 0.05 ms). A table no
 * index serves is still scanned.
 */
export const KEYED_LOOKUPS = 'enable_seqscan = off';

/** SQLSTATEs worth retrying: serialization failure, deadlock. */
const RETRYABLE = new Set(['40001', '40P01']);

export function sqlState(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
    ? error.code
    : undefined;
}

/**
 * A unique violation (SQLSTATE 23505), on the named constraint or index when one is given. Reads
 * a pg error, or the pg error inside a TypeORM QueryFailedError (`driverError`).
 */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: unknown; constraint?: unknown; driverError?: { code?: unknown; constraint?: unknown } } | null;
  const code = e?.code ?? e?.driverError?.code;
  const name = e?.constraint ?? e?.driverError?.constraint;
  return code === '23505' && (constraint === undefined || name === constraint);
}

/** Errors caused by the data itself (data exceptions, integrity violations): retrying cannot help. */
export function isDataError(error: unknown): boolean {
  const code = sqlState(error);
  return code !== undefined && (code.startsWith('22') || code.startsWith('23'));
}

export interface TransactionOptions {
  /** Tries in all when a deadlock or serialization failure aborts the transaction (default 5). */
  attempts?: number;
  /**
   * Commit without waiting for the WAL flush (`synchronous_commit = off`): for work whose loss in a
   * database crash is made good by its own recovery path — never for anything a caller is told is
   * durable.
   */
  asyncCommit?: boolean;
  /** Planner or runtime settings for this transaction only (`SET LOCAL`), sent with its BEGIN: e.g. `jit = off`. */
  settings?: readonly string[];
}

/**
 * The one way to run statements as a unit. On a pool: one transaction, retrying deadlocks and
 * serialization failures. On the client of a transaction the caller holds: a savepoint of it, so a
 * failed `work` undoes only its own statements and the caller's transaction can go on (what a
 * retry after a unique violation relies on); the caller's transaction decides the rest (options
 * apply to new transactions only). Nothing else in product code issues BEGIN, COMMIT, ROLLBACK
 * or SAVEPOINT, or opens a TypeORM transaction (tests/workspace/one-way-to-the-database.spec.ts).
 */
export async function withTransaction<T>(
  db: Sql,
  work: (client: PoolClient) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  if (!(db instanceof Pool)) return inSavepoint(db, work);
  const pool = db;
  const attempts = options.attempts ?? 5;
  const begin = ['BEGIN', ...(options.asyncCommit ? ['synchronous_commit = off'] : []), ...(options.settings ?? [])].join('; SET LOCAL ');
  for (let attempt = 1; ; attempt += 1) {
    const client = await pool.connect();
    let broken = false;
    // A connection cut while no statement is running (a server restart between two statements of
    // the transaction) is reported as an 'error' event on the client: without a listener it would
    // crash the process. The next statement fails, and the transaction with it.
    const lost = () => {
      broken = true;
    };
    client.on('error', lost);
    try {
      await client.query(begin);
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
      client.off('error', lost);
      client.release(broken ? true : undefined);
    }
  }
}

async function inSavepoint<T>(client: PoolClient, work: (client: PoolClient) => Promise<T>): Promise<T> {
  await client.query('SAVEPOINT nested_work');
  try {
    const result = await work(client);
    await client.query('RELEASE SAVEPOINT nested_work');
    return result;
  } catch (error) {
    // Should even this fail, the caller's transaction is aborted and its next statement says so.
    await client.query('ROLLBACK TO SAVEPOINT nested_work; RELEASE SAVEPOINT nested_work').catch(() => undefined);
    throw error;
  }
}
