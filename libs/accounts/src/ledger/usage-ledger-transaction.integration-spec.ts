import { randomUUID } from 'node:crypto';
import { createDataSource, pgPoolOf, withTransaction } from '@cars/persistence';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { createAccount } from '../accounts/accounts.service';
import { createLedgerPool } from './ledger-pool';
import { commitUsage, getUsage, releaseUsage, reserveUsage, Usage } from './usage-ledger';

/**
 * The ledger inside a caller's own pg transaction (what a dispatcher claiming a delivery does):
 * reservations and commits are part of that transaction — rolled back with it, visible once it
 * commits. The client of the transaction is passed as is, like a pool.
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

  it('reserves, commits and releases as part of the transaction that holds it', async () => {
    const { account } = await createAccount(pgPoolOf(db), { email: `tx-${randomUUID()}@example.test`, plan: '1k', emailVerified: true, planExpiresAt: null });
    const now = new Date();

    // Rolled back: nothing happened.
    const rollBack = new Error('roll back');
    let undone: Usage | undefined;
    await expect(
      withTransaction(pool, async (client) => {
        const reserved = await reserveUsage(client, { accountId: account.id, limit: 2, now });
        expect(reserved.ok).toBe(true);
        if (reserved.ok) expect(await commitUsage(client, reserved.reservation)).toBe(true);
        undone = await getUsage(client, account.id, now);
        throw rollBack;
      }),
    ).rejects.toBe(rollBack);
    expect(undone).toMatchObject({ used: 1, reserved: 0 });
    expect(await getUsage(pgPoolOf(db), account.id, now)).toMatchObject({ used: 0, reserved: 0 });

    // Committed: one unit used, and a released reservation leaves nothing behind.
    await withTransaction(pool, async (client) => {
      const first = await reserveUsage(client, { accountId: account.id, limit: 2, now });
      const second = await reserveUsage(client, { accountId: account.id, limit: 2, now });
      const third = await reserveUsage(client, { accountId: account.id, limit: 2, now });
      expect([first.ok, second.ok, third.ok]).toEqual([true, true, false]);
      if (first.ok) await commitUsage(client, first.reservation);
      if (second.ok) expect(await releaseUsage(client, second.reservation)).toBe(true);
    });
    expect(await getUsage(pgPoolOf(db), account.id, now)).toMatchObject({ used: 1, reserved: 0 });
  });

  it('runs on the ledger pool, whose connections commit asynchronously', async () => {
    const ledger = createLedgerPool(process.env.DATABASE_URL!, { max: 1 });
    try {
      const { account } = await createAccount(ledger, { email: `ledger-pool-${randomUUID()}@example.test`, plan: '1k' });
      const reserved = await reserveUsage(ledger, { accountId: account.id, limit: 1 });
      expect(reserved.ok).toBe(true);
      if (reserved.ok) expect(await commitUsage(ledger, reserved.reservation)).toBe(true);
      expect(await getUsage(pgPoolOf(db), account.id)).toMatchObject({ used: 1, reserved: 0 });
      expect((await ledger.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows).toEqual([{ synchronous_commit: 'off' }]);
    } finally {
      await ledger.end();
    }
  });
});
