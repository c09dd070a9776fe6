import { randomUUID } from 'node:crypto';
import { pgPoolOf } from '@cars/persistence';
import { openTestDataSource } from '@cars/testing';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { createAccount } from '../accounts/accounts.service';
import { getDailyUsage } from './usage-daily';
import { commitUsage, getUsageBreakdown, reserveUsage, setUsedUnits, type UsageKind } from './usage-ledger';

/** The per-day history the account overview shows: written by the ledger's charges, read per billing period. */
describe('daily usage (PostgreSQL)', () => {
  let db: DataSource;
  let sql: Pool;

  beforeAll(async () => {
    db = await openTestDataSource();
    sql = pgPoolOf(db);
  });

  afterAll(async () => {
    await db?.destroy();
  });

  const newAccount = async () => (await createAccount(sql, { email: `daily-${randomUUID()}@example.test`, plan: '10k' })).account.id;

  async function charge(accountId: string, times: number, kind?: UsageKind, now?: Date): Promise<void> {
    for (let i = 0; i < times; i++) {
      const reserved = await reserveUsage(sql, { accountId, limit: 10_000, kind, now });
      if (!reserved.ok) throw new Error('no room');
      expect(await commitUsage(sql, reserved.reservation)).toBe(true);
    }
  }

  it('counts each charge on its UTC day, requests apart from deliveries, every day of the period listed', async () => {
    const accountId = await newAccount();
    const now = new Date();
    await charge(accountId, 3, 'request');
    await charge(accountId, 2);
    // A reservation that is not committed charges nothing.
    expect((await reserveUsage(sql, { accountId, limit: 10_000, kind: 'request' })).ok).toBe(true);

    const days = await getDailyUsage(sql, accountId, now);
    const today = now.toISOString().slice(0, 10);
    expect(days).toHaveLength(now.getUTCDate());
    expect(days[0].date).toBe(`${today.slice(0, 8)}01`);
    expect(days.at(-1)).toEqual({ date: today, requests: 3, deliveries: 2 });
    expect(days.slice(0, -1).every((d) => d.requests === 0 && d.deliveries === 0)).toBe(true);
    const breakdown = await getUsageBreakdown(sql, accountId, now);
    expect({ requests: breakdown.requests, deliveries: breakdown.deliveries }).toEqual({ requests: 3, deliveries: 2 });

    // An operator's correction downwards changes no day; one upwards counts as deliveries.
    await setUsedUnits(sql, accountId, 1, now);
    expect((await getDailyUsage(sql, accountId, now)).at(-1)).toEqual({ date: today, requests: 3, deliveries: 2 });
    await setUsedUnits(sql, accountId, 4, now);
    expect((await getDailyUsage(sql, accountId, now)).at(-1)).toEqual({ date: today, requests: 3, deliveries: 5 });
  });

  it("counts a charge to a past period on that period's last day, and keeps accounts apart", async () => {
    const accountId = await newAccount();
    const other = await newAccount();
    const now = new Date();
    const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 10));
    await charge(accountId, 2, 'request', lastMonth);
    await charge(other, 1, 'request');
    const endOfLastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 0, 23));
    const past = await getDailyUsage(sql, accountId, endOfLastMonth);
    expect(past).toHaveLength(endOfLastMonth.getUTCDate());
    expect(past.at(-1)).toMatchObject({ requests: 2, deliveries: 0 });
    expect((await getDailyUsage(sql, accountId, now)).every((d) => d.requests === 0 && d.deliveries === 0)).toBe(true);
    expect((await getDailyUsage(sql, other, now)).at(-1)).toMatchObject({ requests: 1 });
  });
});
