/** Planner settings for one statement, e.g. `{ enable_bitmapscan: 'off' }` (applied with SET LOCAL). */
export type PlannerSettings = Readonly<Record<string, string>>;

/**
 * What the query repositories need from a database: one parameterized statement at a time, on any
 * pooled connection, optionally with planner settings of its own. In the service it is the pg pool
 * of the process's DataSource; the query benchmark's bare baseline runs the same repositories
 * over a pool of its own.
 */
export abstract class SqlClient {
  abstract query<R>(text: string, values: readonly unknown[]): Promise<R[]>;

  /** The statement in a transaction of its own whose first statement sets `settings` locally. */
  abstract queryWith<R>(settings: PlannerSettings, text: string, values: readonly unknown[]): Promise<R[]>;
}

/** `BEGIN` and the settings in one round trip (simple protocol: names and values are ours, not input). */
export function beginWith(settings: PlannerSettings): string {
  const assignments = Object.entries(settings).map(([name, value]) => {
    if (!/^[a-z_]+$/.test(name) || !/^[A-Za-z0-9_.]+$/.test(value)) throw new Error(`bad planner setting ${name}=${value}`);
    return `set_config('${name}', '${value}', true)`;
  });
  return `BEGIN; SELECT ${assignments.join(', ')}`;
}

/** Anything with pg's `Pool` shape. */
export interface PgPoolLike {
  query(text: string, values: unknown[]): Promise<{ rows: unknown[] }>;
  connect(): Promise<{ query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>; release(): void }>;
}

export class PgSqlClient extends SqlClient {
  constructor(private readonly pool: PgPoolLike) {
    super();
  }

  async query<R>(text: string, values: readonly unknown[]): Promise<R[]> {
    return (await this.pool.query(text, [...values])).rows as R[];
  }

  async queryWith<R>(settings: PlannerSettings, text: string, values: readonly unknown[]): Promise<R[]> {
    const client = await this.pool.connect();
    try {
      await client.query(beginWith(settings));
      try {
        const { rows } = await client.query(text, [...values]);
        await client.query('COMMIT');
        return rows as R[];
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    } finally {
      client.release();
    }
  }
}
