import { firstRow, Sql } from './pg';

/**
 * `instance_state`: named values of this installation (the demo keys' secret, whether the demo
 * data set was loaded). Its one writer: whoever needs a value asks here.
 */
export async function readInstanceState(db: Sql, name: string): Promise<string | null> {
  return (await firstRow<{ value: string }>(db, `SELECT value FROM instance_state WHERE name = $1`, [name]))?.value ?? null;
}

/** Stores `value` under `name`; an existing value is kept (`ifAbsent`) or replaced. Returns the value in force. */
export async function writeInstanceState(db: Sql, name: string, value: string, options: { ifAbsent?: boolean } = {}): Promise<string> {
  const row = await firstRow<{ value: string }>(
    db,
    options.ifAbsent
      ? `WITH added AS (INSERT INTO instance_state (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING RETURNING value)
         SELECT value FROM added UNION ALL SELECT value FROM instance_state WHERE name = $1 LIMIT 1`
      : `INSERT INTO instance_state (name, value) VALUES ($1, $2)
         ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value, updated_at = now() RETURNING value`,
    [name, value],
  );
  return row!.value;
}
