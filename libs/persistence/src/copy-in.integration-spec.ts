import { Pool, PoolClient } from 'pg';
import { copyIn } from './copy-in';
import { sqlState } from './pg';

const pool = new Pool({ connectionString: process.env.DATABASE_URL!, max: 2 });
let client: PoolClient;

beforeEach(async () => {
  client = await pool.connect();
  await client.query('CREATE TEMP TABLE copy_in_spec (n int NOT NULL, label text, tags text[])');
});

afterEach(async () => {
  await client.query('DROP TABLE IF EXISTS copy_in_spec');
  client.release();
});

afterAll(async () => {
  await pool.end();
});

const COPY = 'COPY copy_in_spec (n, label, tags) FROM STDIN';

async function stored(): Promise<{ n: number; label: string | null; tags: string[] | null }[]> {
  return (await client.query('SELECT n, label, tags FROM copy_in_spec ORDER BY n')).rows;
}

describe('copyIn (COPY FROM STDIN with the rows in the statement\'s write)', () => {
  it('stores every row, escapes and nulls as COPY text means them, and says how many', async () => {
    const taken = await copyIn(client, COPY, '1\tplain\t{"a","b c"}\n2\ttab\\there\t\\N\n3\t\\N\t{}\n');
    expect(taken).toBe(3);
    expect(await stored()).toEqual([
      { n: 1, label: 'plain', tags: ['a', 'b c'] },
      { n: 2, label: 'tab\there', tags: null },
      { n: 3, label: null, tags: [] },
    ]);
  });

  it('takes an empty text as no rows', async () => {
    expect(await copyIn(client, COPY, '')).toBe(0);
    expect(await stored()).toEqual([]);
  });

  it("rejects with PostgreSQL's error when a row is refused, and the rows sent after it do not confuse the connection", async () => {
    await client.query('BEGIN');
    const refused = copyIn(client, COPY, '1\tok\t\\N\nnot-a-number\tbad\t\\N\n3\tafter\t\\N\n');
    await expect(refused).rejects.toMatchObject({ code: '22P02' });
    await client.query('ROLLBACK');
    // The connection answers the next statements, in order.
    expect((await client.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    expect(await copyIn(client, COPY, '4\tnext\t\\N\n')).toBe(1);
    expect(await stored()).toEqual([{ n: 4, label: 'next', tags: null }]);
  });

  it('refuses text holding a NUL character (SQLSTATE class 22), storing nothing altered', async () => {
    const error = await copyIn(client, COPY, '1\tNUL \u0000 inside\t\\N\n').catch((e: unknown) => e);
    expect(sqlState(error)?.startsWith('22')).toBe(true);
    expect(await stored()).toEqual([]);
  });

  it('rejects a COPY that cannot start (unknown table): the rows already sent are ignored and the client goes on', async () => {
    const error = await copyIn(client, 'COPY no_such_table_copy_in (n) FROM STDIN', '1\n2\n').catch((e: unknown) => e);
    expect(sqlState(error)).toBe('42P01');
    expect((await client.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    expect(await copyIn(client, COPY, '5\tfine\t\\N\n')).toBe(1);
  });

  it('carries a large batch in one statement', async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `${i}\t${'x'.repeat(50)}\t{"t${i}"}\n`).join('');
    expect(await copyIn(client, COPY, lines)).toBe(20_000);
    const { rows } = await client.query<{ count: string; last: string[] }>(
      'SELECT count(*), (SELECT tags FROM copy_in_spec WHERE n = 19999) AS last FROM copy_in_spec',
    );
    expect(rows[0]).toEqual({ count: '20000', last: ['t19999'] });
  });
});
