import { Pool } from 'pg';
import { PgSqlClient } from './sql-client';

/** PgSqlClient on PostgreSQL: planner settings hold for their own statement only. */
describe('PgSqlClient (PostgreSQL)', () => {
  let pool: Pool;
  let sql: PgSqlClient;

  beforeAll(() => {
    // One connection: the statement after a queryWith runs on the very connection it used.
    pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 1, application_name: 'test' });
    sql = new PgSqlClient(pool);
  });

  afterAll(async () => {
    await pool?.end();
  });

  const current = `SELECT current_setting('work_mem') AS work_mem, current_setting('enable_seqscan') AS seqscan, now() = statement_timestamp() AS own`;

  it('runs a statement with its settings in a transaction of its own, and leaves the connection as it was', async () => {
    const [outside] = await sql.query<{ work_mem: string; seqscan: string }>(current, []);
    expect(outside.seqscan).toBe('on');
    expect(outside.work_mem).not.toBe('64MB');

    // In a transaction, now() is its start, before this statement's own timestamp.
    const inside = await sql.queryWith(
      { enable_seqscan: 'off', work_mem: '64MB' },
      `SELECT current_setting('work_mem') AS work_mem, current_setting('enable_seqscan') AS seqscan, now() < statement_timestamp() AS in_transaction`,
      [],
    );
    expect(inside).toEqual([{ work_mem: '64MB', seqscan: 'off', in_transaction: true }]);

    expect(await sql.query(current, [])).toEqual([{ ...outside, own: true }]);
  });

  it('passes values and reports a failed statement, the connection still usable', async () => {
    expect(await sql.queryWith({ jit: 'off' }, 'SELECT $1::int + 1 AS n', [41])).toEqual([{ n: 42 }]);
    await expect(sql.queryWith({ jit: 'off' }, 'SELECT 1 / $1::int', [0])).rejects.toMatchObject({ code: '22012' });
    expect(await sql.query('SELECT 1 AS one', [])).toEqual([{ one: 1 }]);
  });
});
