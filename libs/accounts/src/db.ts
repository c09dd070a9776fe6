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
 * Anything that runs one SQL statement and resolves to its rows: a DataSource, an EntityManager,
 * or the ledger's own connection pool (`createLedgerPool`).
 */
export interface SqlRunner {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/** `query` rows as typed records (UPDATEs are wrapped in a CTE so every statement returns rows). */
export async function rows<T>(db: SqlRunner, sql: string, params: unknown[] = []): Promise<T[]> {
  return (await db.query(sql, params)) as T[];
}

export async function firstRow<T>(db: SqlRunner, sql: string, params: unknown[] = []): Promise<T | null> {
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
