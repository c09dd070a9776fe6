import { rows, withTransaction } from '@cars/persistence';
import { Pool } from 'pg';

/** Planner settings for one statement, e.g. `{ enable_bitmapscan: 'off' }` (applied with SET LOCAL). */
export type PlannerSettings = Readonly<Record<string, string>>;

/**
 * What the query repositories need from a database: one parameterized statement at a time, on any
 * pooled connection, optionally with planner settings of its own. In the service it is the read
 * pool of the process (ReadPool); the query benchmark's bare baseline runs the same repositories
 * over a pool of its own.
 */
export abstract class SqlClient {
  abstract query<R>(text: string, values: readonly unknown[]): Promise<R[]>;

  /** The statement in a transaction of its own whose first statement sets `settings` locally. */
  abstract queryWith<R>(settings: PlannerSettings, text: string, values: readonly unknown[]): Promise<R[]>;
}

/**
 * The settings as `SET LOCAL` assignments (`enable_seqscan = 'off'`), for `withTransaction`, which
 * sends them with its BEGIN in one round trip (simple protocol: names and values are ours, not
 * input, and checked here).
 */
export function localSettings(settings: PlannerSettings): string[] {
  return Object.entries(settings).map(([name, value]) => {
    if (!/^[a-z_]+$/.test(name) || !/^[A-Za-z0-9_.]+$/.test(value)) throw new Error(`bad planner setting ${name}=${value}`);
    return `${name} = '${value}'`;
  });
}

export class PgSqlClient extends SqlClient {
  constructor(private readonly pool: Pool) {
    super();
  }

  query<R>(text: string, values: readonly unknown[]): Promise<R[]> {
    return rows<R>(this.pool, text, values);
  }

  /** A read: tried once, as any other statement of a request (no retry of a failed transaction). */
  queryWith<R>(settings: PlannerSettings, text: string, values: readonly unknown[]): Promise<R[]> {
    return withTransaction(this.pool, (client) => rows<R>(client, text, values), { attempts: 1, settings: localSettings(settings) });
  }
}
