import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { createAccount } from '../accounts/accounts.service';
import { getUsage, getUsageBreakdown, reserveUsage, setUsedUnits } from './usage-ledger';
import { billingPeriod } from './billing-period';
import { leaseUsage, leaseUsageBatch, releaseExpiredLeases, settleLease, settleLeases } from './usage-leases';

describe('usage leases (PostgreSQL)', () => {
  // Enough connections for the concurrent grants to meet at the row lock.
  const sql = new Pool({ connectionString: process.env.DATABASE_URL, max: 12, application_name: 'test' });
  afterAll(() => sql.end());

  const newAccount = async () => (await createAccount(sql, { email: `leases-${randomUUID()}@example.test`, plan: '1k' })).account.id;
  const lease = (accountId: string, leaseId: string, want: number, limit = 1000, ttlMs = 30000) =>
    leaseUsage(sql, { leaseId, accountId, limit, want, shareOfRoom: 4, ttlMs, holder: 'spec' });
  const leaseUnits = async (accountId: string) =>
    ((await sql.query(`SELECT coalesce(sum(units), 0)::int AS units FROM usage_leases WHERE account_id = $1`, [accountId])).rows[0] as { units: number })
      .units;

  it('grants a block in one statement (creating the period row), at most a quarter of the room, and refuses when none is left', async () => {
    const accountId = await newAccount();
    const id = randomUUID();
    expect(await lease(accountId, id, 64, 100)).toMatchObject({ ok: true, units: 25, consumed: 25 });
    expect(await lease(accountId, id, 64, 100)).toMatchObject({ ok: true, units: 18, consumed: 43 });
    expect(await leaseUnits(accountId)).toBe(43);
    await setUsedUnits(sql, accountId, 55);
    // 2 left: one unit at a time, then refused.
    expect(await lease(accountId, id, 64, 100)).toMatchObject({ ok: true, units: 1 });
    expect(await lease(accountId, id, 64, 100)).toMatchObject({ ok: true, units: 1 });
    expect(await lease(accountId, id, 64, 100)).toMatchObject({ ok: false, limit: 100 });
    expect(await getUsage(sql, accountId)).toMatchObject({ used: 55, reserved: 45 });
  });

  it('never grants beyond the limit to concurrent holders, and the leases account for every reserved unit', async () => {
    const accountId = await newAccount();
    const holders = Array.from({ length: 6 }, () => randomUUID());
    // The delivery worker reserves from the same row at the same time.
    const grants = await Promise.all([
      ...Array.from({ length: 60 }, (_, i) => lease(accountId, holders[i % holders.length], 8, 200)),
      ...Array.from({ length: 10 }, () => reserveUsage(sql, { accountId, limit: 200, units: 3 })),
    ]);
    const leased = grants.reduce((sum, g) => sum + (g.ok && 'units' in g && !('reservation' in g) ? g.units : 0), 0);
    const delivered = grants.reduce((sum, g) => sum + (g.ok && 'reservation' in g ? g.reservation.units : 0), 0);
    expect(leased + delivered).toBe(200);
    expect(await getUsage(sql, accountId)).toMatchObject({ used: 0, reserved: 200 });
    expect(await leaseUnits(accountId)).toBe(leased);
  });

  it('settles spent units into used and requests, gives back the rest on close, and knows no lease twice', async () => {
    const accountId = await newAccount();
    const id = randomUUID();
    await lease(accountId, id, 10, 1000);
    await lease(accountId, id, 10, 1000); // 10 + 10: the lease holds 20
    expect(await settleLease(sql, { leaseId: id, spent: 7, returned: 3, kind: 'request', close: false, ttlMs: 30000 })).toBe(true);
    expect(await getUsageBreakdown(sql, accountId)).toMatchObject({ used: 7, reserved: 10, requests: 7 });
    expect(await leaseUnits(accountId)).toBe(10);
    // More than it holds: nothing happens.
    expect(await settleLease(sql, { leaseId: id, spent: 11, returned: 0, kind: 'request', close: false, ttlMs: 30000 })).toBe(false);
    expect(await settleLease(sql, { leaseId: id, spent: 4, returned: 0, kind: 'request', close: true, ttlMs: 30000 })).toBe(true);
    expect(await getUsageBreakdown(sql, accountId)).toMatchObject({ used: 11, reserved: 0, requests: 11 });
    expect(await leaseUnits(accountId)).toBe(0);
    expect(await settleLease(sql, { leaseId: id, spent: 1, returned: 0, kind: 'request', close: true, ttlMs: 30000 })).toBe(false);
    expect(await getUsage(sql, accountId)).toMatchObject({ used: 11, reserved: 0 });
  });

  it('gives back the units of expired leases only; a settlement of a swept lease changes nothing', async () => {
    const accountId = await newAccount();
    const expired = randomUUID();
    const live = randomUUID();
    await lease(accountId, expired, 12, 1000, 1);
    await lease(accountId, live, 12, 1000, 60000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await releaseExpiredLeases(sql, accountId)).toBe(12);
    expect(await getUsage(sql, accountId)).toMatchObject({ used: 0, reserved: 12 });
    expect(await settleLease(sql, { leaseId: expired, spent: 5, returned: 0, kind: 'request', close: false, ttlMs: 30000 })).toBe(false);
    expect(await releaseExpiredLeases(sql, accountId)).toBe(0);
    expect(await getUsage(sql, accountId)).toMatchObject({ used: 0, reserved: 12 });
  });

  describe('in batches (one statement for many accounts)', () => {
    const period = billingPeriod();
    const options = { shareOfRoom: 4, ttlMs: 30000, holder: 'spec' };

    it('grants to each lease by its own account\'s room: a new period row, a nearly full one, a full one, two leases of one account', async () => {
      const [fresh, nearly, full, twice] = await Promise.all([newAccount(), newAccount(), newAccount(), newAccount()]);
      await setUsedUnits(sql, nearly, 998);
      await setUsedUnits(sql, full, 1000);
      const [a, b] = [randomUUID(), randomUUID()];
      const grants = await leaseUsageBatch(
        sql,
        [
          { leaseId: randomUUID(), accountId: fresh, period, limit: 1000, want: 16 },
          { leaseId: randomUUID(), accountId: nearly, period, limit: 1000, want: 16 },
          { leaseId: randomUUID(), accountId: full, period, limit: 1000, want: 16 },
          { leaseId: a, accountId: twice, period, limit: 100, want: 64 },
          { leaseId: b, accountId: twice, period, limit: 100, want: 64 },
        ],
        options,
      );
      expect(grants).toMatchObject([
        { ok: true, units: 16, consumed: 16, limit: 1000, period: period.key, periodEnd: period.end },
        { ok: true, units: 1, consumed: 999 },
        { ok: false, limit: 1000, period: period.key },
        { ok: true, units: 25, consumed: 25 },
        // The second lease of the account sees the first one's grant: a quarter of 75.
        { ok: true, units: 18, consumed: 43 },
      ]);
      expect(await getUsage(sql, fresh)).toMatchObject({ used: 0, reserved: 16 });
      expect(await getUsage(sql, nearly)).toMatchObject({ used: 998, reserved: 1 });
      expect(await getUsage(sql, full)).toMatchObject({ used: 1000, reserved: 0 });
      expect(await getUsage(sql, twice)).toMatchObject({ used: 0, reserved: 43 });
      expect(await leaseUnits(twice)).toBe(43);
    });

    it('never grants beyond a limit when batches over the same accounts, in opposite orders, meet the delivery worker at the rows', async () => {
      const accounts = await Promise.all(Array.from({ length: 6 }, () => newAccount()));
      const holders = [randomUUID(), randomUUID()];
      const batch = (holder: string, order: readonly string[]) =>
        leaseUsageBatch(sql, order.map((accountId) => ({ leaseId: holder === holders[0] ? accountId.replace(/^.{8}/, '00000000') : accountId.replace(/^.{8}/, '11111111'), accountId, period, limit: 120, want: 8 })), options);
      const reversed = [...accounts].reverse();
      const results = await Promise.all([
        ...Array.from({ length: 40 }, (_, i) => batch(holders[i % 2], i % 2 === 0 ? accounts : reversed)),
        ...accounts.flatMap((accountId) => Array.from({ length: 4 }, () => reserveUsage(sql, { accountId, limit: 120, units: 5 }))),
      ]);
      for (const accountId of accounts) {
        const usage = await getUsage(sql, accountId);
        expect(usage.used + usage.reserved).toBe(120);
        let reservedByDeliveries = 0;
        for (const r of results.flat()) if (r.ok && 'reservation' in r && r.reservation.accountId === accountId) reservedByDeliveries += r.reservation.units;
        expect(await leaseUnits(accountId)).toBe(120 - reservedByDeliveries);
      }
    });

    it('settles, renews and closes many leases of several accounts in one call; a swept lease is not known and changes nothing', async () => {
      const [first, second] = await Promise.all([newAccount(), newAccount()]);
      const [kept, closed, other, swept] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
      await leaseUsageBatch(
        sql,
        [
          { leaseId: kept, accountId: first, period, limit: 1000, want: 10 },
          { leaseId: other, accountId: second, period, limit: 1000, want: 10 },
        ],
        options,
      );
      await leaseUsage(sql, { leaseId: closed, accountId: first, limit: 1000, want: 10, shareOfRoom: 4, ttlMs: 30000, holder: 'spec' });
      const known = await settleLeases(sql, [
        { leaseId: kept, spent: 4, returned: 1, kind: 'request', close: false, ttlMs: 30000 },
        { leaseId: closed, spent: 3, returned: 0, kind: 'request', close: true, ttlMs: 30000 },
        { leaseId: other, spent: 10, returned: 0, close: false, ttlMs: 30000 },
        { leaseId: swept, spent: 2, returned: 0, kind: 'request', close: false, ttlMs: 30000 },
        // The same lease again: settled after the first of its settlements.
        { leaseId: kept, spent: 5, returned: 0, kind: 'request', close: true, ttlMs: 30000 },
      ]);
      expect([...known].sort()).toEqual([kept, closed, other].sort());
      expect(await getUsageBreakdown(sql, first)).toMatchObject({ used: 12, reserved: 0, requests: 12 });
      // Units that are not requests count as used only.
      expect(await getUsageBreakdown(sql, second)).toMatchObject({ used: 10, reserved: 0, requests: 0 });
      expect(await leaseUnits(first)).toBe(0);
      expect(await leaseUnits(second)).toBe(0);
    });
  });
});
