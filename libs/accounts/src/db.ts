import { pgPoolOf, withTransaction } from '@cars/persistence';
import { Pool, PoolClient } from 'pg';
import type { DataSource } from 'typeorm';

/** A pg pool, or the client of a transaction the caller holds. */
export type PgHandle = Pool | PoolClient;

/**
 * Where the accounts functions run their SQL: a pg pool, the client of a transaction the caller
 * holds, or the process DataSource (whose own pg pool is used: `pgPoolOf`). Statements always go
 * through pg.
 */
export type Db = PgHandle | DataSource;

function isDataSource(db: Db | SqlRunner): db is DataSource {
  return 'driver' in db && 'manager' in db;
}

/** The pg handle of `db`: the DataSource's pool, or the pool or client as given. */
export function pgHandleOf(db: Db): PgHandle {
  return isDataSource(db) ? pgPoolOf(db) : db;
}

/**
 * Runs `work` in a transaction: a new one (persistence's `withTransaction`) on a pool or a
 * DataSource; on the client of the caller's transaction, inside a savepoint of it, so a failed
 * `work` undoes only its own statements and the caller's transaction can go on (what a retry
 * after a unique violation relies on).
 */
export async function inTransaction<T>(db: Db, work: (tx: PoolClient) => Promise<T>): Promise<T> {
  const handle = pgHandleOf(db);
  if (handle instanceof Pool) return withTransaction(handle, work);
  await handle.query('SAVEPOINT accounts_work');
  try {
    const result = await work(handle);
    await handle.query('RELEASE SAVEPOINT accounts_work');
    return result;
  } catch (error) {
    // Should even this fail, the caller's transaction is aborted and its next statement says so.
    await handle.query('ROLLBACK TO SAVEPOINT accounts_work; RELEASE SAVEPOINT accounts_work').catch(() => undefined);
    throw error;
  }
}

/**
 * A handle that runs one SQL statement and resolves to its *rows*: the ledger's own connection
 * pool (`createLedgerPool`), or a pg pool or client of the caller's transaction through
 * `pgRunner`. Branded, because a bare pg `Pool`/`PoolClient` has a structurally compatible
 * `query` that resolves to a `QueryResult`, not rows: passed as is it would read no row and
 * answer "limit exceeded". Now it does not compile.
 */
export interface SqlRunner {
  readonly resolvesToRows: true;
  query(sql: string, parameters?: unknown[]): Promise<unknown[]>;
}

/**
 * Where the ledger and plan functions run a statement: a SqlRunner, or the process DataSource
 * (its pg pool). Never a bare pg pool or client: see SqlRunner.
 */
export type SqlHandle = DataSource | SqlRunner;

/** Anything with pg's `query(text, values) → {rows}`: a Pool, or a PoolClient inside a transaction. */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** A pg pool or client as a SqlRunner: the accounts functions then run in the caller's transaction. */
export function pgRunner(client: PgQueryable): SqlRunner {
  return { resolvesToRows: true, query: async (sql, parameters) => (await client.query(sql, parameters)).rows };
}

/** The SqlRunner of a handle: the DataSource's pg pool, or the runner as given. */
export function sqlRunnerOf(db: SqlHandle): SqlRunner {
  return isDataSource(db) ? pgRunner(pgPoolOf(db)) : db;
}

/** `query` rows as typed records (UPDATEs are wrapped in a CTE so every statement returns rows). */
export async function rows<T>(db: SqlHandle, sql: string, params: unknown[] = []): Promise<T[]> {
  return (await sqlRunnerOf(db).query(sql, params)) as T[];
}

export async function firstRow<T>(db: SqlHandle, sql: string, params: unknown[] = []): Promise<T | null> {
  return (await rows<T>(db, sql, params))[0] ?? null;
}

/** The rows of one statement on a pg pool or client. */
export async function pgRows<T>(sql: PgHandle, text: string, params: unknown[] = []): Promise<T[]> {
  return (await sql.query(text, params)).rows as T[];
}

export async function pgFirstRow<T>(sql: PgHandle, text: string, params: unknown[] = []): Promise<T | null> {
  return (await pgRows<T>(sql, text, params))[0] ?? null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** PostgreSQL unique violation on the named constraint or index. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: unknown; constraint?: unknown; driverError?: { code?: unknown; constraint?: unknown } };
  const code = e?.code ?? e?.driverError?.code;
  const name = e?.constraint ?? e?.driverError?.constraint;
  return code === '23505' && (constraint === undefined || name === constraint);
}
