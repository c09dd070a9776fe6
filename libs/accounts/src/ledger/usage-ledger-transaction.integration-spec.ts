import { randomUUID } from 'node:crypto';
import { createDataSource } from '@cars/persistence';
import { Pool, PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { createAccount } from '../accounts/accounts.service';
import { pgRunner } from '../db';
import { commitUsage, getUsage, releaseUsage, reserveUsage } from './usage-ledger';

/**
 * The ledger inside a caller's own pg transaction (what a dispatcher claiming a delivery does):
 * reservations and commits are part of that transaction — rolled back with it, visible once it
 * commits. A bare PoolClient does not type-check as a SqlRunner (it resolves to a QueryResult).
 */
describe('usage ledger in a caller transaction', () => {
  let db: DataSource;
  let pool: Pool;

  beforeAll(async () => {
    db = await createDataSource({ url: process.env.DATABASE_URL!, poolSize: 2, applicationName: 'test' }).initialize();
    pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
  });

  afterAll(async () => {
    await pool?.end();
    await db?.destroy();
  });

  async function inTransaction<T>(work: (client: PoolClient) => Promise<T>, outcome: 'COMMIT' | 'ROLLBACK'): Promise<T> {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query(outcome);
      return result;
    } finally {
      client.release();
    }
  }

  it('reserves, commits and releases as part of the transaction that holds it', async () => {
    const { account } = await createAccount(db, { email: `tx-${randomUUID()}@example.test`, plan: '1k', emailVerified: true, planExpiresAt: null });
    const now = new Date();

    // Rolled back: nothing happened.
    const undone = await inTransaction(async (client) => {
      const reserved = await reserveUsage(pgRunner(client), { accountId: account.id, limit: 2, now });
      expect(reserved.ok).toBe(true);
      if (reserved.ok) expect(await commitUsage(pgRunner(client), reserved.reservation)).toBe(true);
      return getUsage(pgRunner(client), account.id, now);
    }, 'ROLLBACK');
    expect(undone).toMatchObject({ used: 1, reserved: 0 });
    expect(await getUsage(db, account.id, now)).toMatchObject({ used: 0, reserved: 0 });

    // Committed: one unit used, and a released reservation leaves nothing behind.
    await inTransaction(async (client) => {
      const first = await reserveUsage(pgRunner(client), { accountId: account.id, limit: 2, now });
      const second = await reserveUsage(pgRunner(client), { accountId: account.id, limit: 2, now });
      const third = await reserveUsage(pgRunner(client), { accountId: account.id, limit: 2, now });
      expect([first.ok, second.ok, third.ok]).toEqual([true, true, false]);
      if (first.ok) await commitUsage(pgRunner(client), first.reservation);
      if (second.ok) expect(await releaseUsage(pgRunner(client), second.reservation)).toBe(true);
    }, 'COMMIT');
    expect(await getUsage(db, account.id, now)).toMatchObject({ used: 1, reserved: 0 });
  });

  it('refuses a bare pg client at compile time', () => {
    const call = (client: PoolClient) =>
      // @ts-expect-error a PoolClient resolves to a QueryResult, not rows: use pgRunner(client)
      reserveUsage(client, { accountId: randomUUID(), limit: 1 });
    expect(typeof call).toBe('function');
  });
});
