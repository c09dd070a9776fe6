import { DataSource, EntityManager } from 'typeorm';

/**
 * Where the accounts functions run their SQL: the process's DataSource, or the EntityManager of a
 * transaction the caller holds (the delivery worker reserves allowance in the same transaction
 * that claims a delivery).
 */
export type Db = DataSource | EntityManager;

export function inTransaction<T>(db: Db, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  // EntityManager.transaction reuses the caller's transaction (as a savepoint) when there is one.
  return (db instanceof DataSource ? db.manager : db).transaction(work);
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

/** Where the accounts and ledger functions run a statement: TypeORM handles or a SqlRunner. */
export type SqlHandle = Db | SqlRunner;

/** Anything with pg's `query(text, values) → {rows}`: a Pool, or a PoolClient inside a transaction. */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** A pg pool or client as a SqlRunner: the accounts functions then run in the caller's transaction. */
export function pgRunner(client: PgQueryable): SqlRunner {
  return { resolvesToRows: true, query: async (sql, parameters) => (await client.query(sql, parameters)).rows };
}

/** `query` rows as typed records (UPDATEs are wrapped in a CTE so every statement returns rows). */
export async function rows<T>(db: SqlHandle, sql: string, params: unknown[] = []): Promise<T[]> {
  return (await db.query(sql, params)) as T[];
}

export async function firstRow<T>(db: SqlHandle, sql: string, params: unknown[] = []): Promise<T | null> {
  return (await rows<T>(db, sql, params))[0] ?? null;
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
