import { randomUUID } from 'node:crypto';
import { createDataSource, pgPoolOf, withTransaction } from '@cars/persistence';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { createAccount } from '../accounts/accounts.service';
import { effectivePlan, PLAN_IDS, PlanId } from '../plans/plans';
import { commitUsage, getUsage, releaseUsage, Reservation, reserveUnderPlan, reserveUsage, setUsedUnits } from './usage-ledger';

describe('usage ledger (PostgreSQL)', () => {
  let db: DataSource;
  let sql: Pool;

  beforeAll(async () => {
    db = await createDataSource({ url: process.env.DATABASE_URL!, poolSize: 12, applicationName: 'test' }).initialize();
    sql = pgPoolOf(db);
  });

  afterAll(async () => {
    await db?.destroy();
  });

  const newAccount = async () =>
    (await createAccount(sql, { email: `ledger-${randomUUID()}@example.test`, plan: '1k' })).account.id;

  it('creates the period row on first use and reserves, commits and releases', async () => {
    const accountId = await newAccount();
    expect(await getUsage(sql, accountId)).toMatchObject({ used: 0, reserved: 0 });

    const first = await reserveUsage(sql, { accountId, limit: 3 });
    expect(first).toMatchObject({ ok: true, consumed: 1, remaining: 2, limit: 3 });
    expect(await getUsage(sql, accountId)).toMatchObject({ used: 0, reserved: 1 });
    const second = await reserveUsage(sql, { accountId, limit: 3 });
    if (!first.ok || !second.ok) throw new Error('expected reservations');

    expect(await commitUsage(sql, first.reservation)).toBe(true);
    expect(await releaseUsage(sql, second.reservation)).toBe(true);
    expect(await getUsage(sql, accountId)).toMatchObject({ used: 1, reserved: 0 });
    // Nothing left to release: reserved never goes negative.
    expect(await releaseUsage(sql, second.reservation)).toBe(false);
    expect(await commitUsage(sql, second.reservation)).toBe(false);
    expect(await getUsage(sql, accountId)).toMatchObject({ used: 1, reserved: 0 });
  });

  it('refuses a reservation that would pass the limit, counting reserved units too', async () => {
    const accountId = await newAccount();
    await setUsedUnits(sql, accountId, 8);
    const a = await reserveUsage(sql, { accountId, limit: 10 });
    const b = await reserveUsage(sql, { accountId, limit: 10 });
    const c = await reserveUsage(sql, { accountId, limit: 10 });
    expect([a.ok, b.ok, c.ok]).toEqual([true, true, false]);
    expect(c).toMatchObject({ ok: false, remaining: 0, limit: 10 });
    expect(await reserveUsage(sql, { accountId, limit: 100, units: 5 })).toMatchObject({ ok: true, consumed: 15 });
    expect((await reserveUsage(sql, { accountId: await newAccount(), limit: 0 })).ok).toBe(false);
    expect((await reserveUsage(sql, { accountId: await newAccount(), limit: 2, units: 3 })).ok).toBe(false);
  });

  it('reserves under the plan in force in one statement, the limit read by the same rule as effectivePlan', async () => {
    // Every plan, without an expiry, expired and not yet expired: the statement's limit is effectivePlan's.
    for (const plan of PLAN_IDS) {
      for (const expires of [null, '-1 minute', '+1 day']) {
        const accountId = (await createAccount(sql, { email: `under-plan-${randomUUID()}@example.test`, plan: plan as PlanId })).account.id;
        const { rows } = await sql.query<{ plan: PlanId; plan_expires_at: Date | null; now: Date }>(
          `UPDATE accounts SET plan_expires_at = CASE WHEN $2::interval IS NULL THEN NULL ELSE now() + $2::interval END
            WHERE id = $1 RETURNING plan, plan_expires_at, now()`,
          [accountId, expires],
        );
        await reserveUsage(sql, { accountId, limit: 1 }); // the period's row exists: the one-statement path
        const result = await reserveUnderPlan(sql, { accountId, units: 1 });
        const expected = effectivePlan({ plan: rows[0].plan, planExpiresAt: rows[0].plan_expires_at }, rows[0].now).monthlyLimit;
        expect({ plan, expires, limit: result?.limit }).toEqual({ plan, expires, limit: expected });
        expect(result?.reservation).toMatchObject({ accountId, units: 1 });
      }
    }

    const accountId = await newAccount(); // 1k
    // No row yet this period: nothing reserved here, the limit for reserveUsage to go on with.
    expect(await reserveUnderPlan(sql, { accountId, units: 5 })).toEqual({ limit: 1000, reservation: null });
    expect(await getUsage(sql, accountId)).toMatchObject({ used: 0, reserved: 0 });
    await setUsedUnits(sql, accountId, 990);
    const ten = await reserveUnderPlan(sql, { accountId, units: 10 });
    expect(ten?.reservation).toMatchObject({ accountId, units: 10 });
    expect(await getUsage(sql, accountId)).toMatchObject({ used: 990, reserved: 10 });
    // Not room for all: nothing reserved.
    expect(await reserveUnderPlan(sql, { accountId, units: 1 })).toEqual({ limit: 1000, reservation: null });
    expect(await getUsage(sql, accountId)).toMatchObject({ used: 990, reserved: 10 });
    expect(await reserveUnderPlan(sql, { accountId: randomUUID(), units: 1 })).toBeNull();
  });

  it('is exact under concurrency: 300 parallel reservations against 25 free units', async () => {
    const accountId = await newAccount();
    await setUsedUnits(sql, accountId, 975);
    const results = await Promise.all(Array.from({ length: 300 }, () => reserveUsage(sql, { accountId, limit: 1000 })));
    const granted = results.filter((r) => r.ok);
    expect(granted).toHaveLength(25);
    expect(await getUsage(sql, accountId)).toMatchObject({ used: 975, reserved: 25 });

    // Half commit, half release, concurrently; then the freed units can be taken again.
    await Promise.all(
      granted.map((r, i) => {
        const reservation = (r as { reservation: Reservation }).reservation;
        return i % 2 === 0 ? commitUsage(sql, reservation) : releaseUsage(sql, reservation);
      }),
    );
    expect(await getUsage(sql, accountId)).toMatchObject({ used: 988, reserved: 0 });
    const again = await Promise.all(Array.from({ length: 50 }, () => reserveUsage(sql, { accountId, limit: 1000 })));
    expect(again.filter((r) => r.ok)).toHaveLength(12);
  });

  it('is exact when concurrent first requests of a period race to create its row', async () => {
    const accountId = await newAccount();
    const results = await Promise.all(Array.from({ length: 60 }, () => reserveUsage(sql, { accountId, limit: 20 })));
    expect(results.filter((r) => r.ok)).toHaveLength(20);
    expect(await getUsage(sql, accountId)).toMatchObject({ used: 0, reserved: 20 });
    const rows: unknown[] = await db.query(`SELECT 1 FROM usage_ledger WHERE account_id = $1`, [accountId]);
    expect(rows).toHaveLength(1);
  });

  it('keeps one row per calendar month and settles a reservation in the month it was made', async () => {
    const accountId = await newAccount();
    const october = await reserveUsage(sql, { accountId, limit: 5, now: new Date('2026-10-31T23:59:59Z') });
    const november = await reserveUsage(sql, { accountId, limit: 5, now: new Date('2026-11-01T00:00:00Z') });
    if (!october.ok || !november.ok) throw new Error('expected reservations');
    expect(october.reservation.period).toBe('2026-10-01');
    expect(october.periodEnd.toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(november.reservation.period).toBe('2026-11-01');
    await commitUsage(sql, october.reservation);
    expect(await getUsage(sql, accountId, new Date('2026-10-15T00:00:00Z'))).toMatchObject({ used: 1, reserved: 0 });
    expect(await getUsage(sql, accountId, new Date('2026-11-15T00:00:00Z'))).toMatchObject({ used: 0, reserved: 1 });
  });

  it('works inside a caller’s transaction (the delivery worker’s use), rolling back with it', async () => {
    const accountId = await newAccount();
    await expect(
      withTransaction(sql, async (tx) => {
        const r = await reserveUsage(tx, { accountId, limit: 10 });
        if (!r.ok) throw new Error('expected a reservation');
        await commitUsage(tx, r.reservation);
        expect(await getUsage(tx, accountId)).toMatchObject({ used: 1 });
        throw new Error('delivery failed');
      }),
    ).rejects.toThrow('delivery failed');
    expect(await getUsage(sql, accountId)).toMatchObject({ used: 0, reserved: 0 });

    await withTransaction(sql, async (tx) => {
      const r = await reserveUsage(tx, { accountId, limit: 10 });
      if (r.ok) await commitUsage(tx, r.reservation);
    });
    expect(await getUsage(sql, accountId)).toMatchObject({ used: 1, reserved: 0 });
  });
});
