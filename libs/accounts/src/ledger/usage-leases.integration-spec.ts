import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { createAccount } from '../accounts/accounts.service';
import { getUsage, getUsageBreakdown, reserveUsage, setUsedUnits } from './usage-ledger';
import { leaseUsage, releaseExpiredLeases, settleLease } from './usage-leases';

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
});
