import { getUsage } from '@cars/accounts';
import { Queues } from '@cars/contracts';
import { pgPoolOf } from '@cars/persistence';
import { QueryModule } from '@cars/service-query';
import { openTestDataSource } from '@cars/testing';
import { DataSource } from 'typeorm';
import { createTestAccount } from './support/accounts';
import { bearer, request } from './support/http';
import { AppProcess, freePort, startApp, waitForOk } from './support/processes';
import { startTestStack, TestStack } from './support/stack';

jest.setTimeout(60_000);

/** Leases of this spec live 2 s without renewal (30 s by default): the sweep comes within a third more. */
const TTL_MS = 2000;
const PATH = '/auctions?limit=1';

/**
 * A gateway killed (SIGKILL: no shutdown, nothing returned) while it holds a lease of allowance:
 * the ledger keeps the lease's units reserved, so no other gateway can hand them out twice, and
 * what the account's user sees as remaining is short by them — until the lease expires and the
 * surviving gateway's sweep gives them back. The units the dead gateway had spent and not yet
 * settled are not counted (docs/adr/0007-metering-leases.md).
 */
describe('a gateway killed while holding a lease', () => {
  let stack: TestStack;
  let db: DataSource;
  let doomed: AppProcess | undefined;

  beforeAll(async () => {
    db = await openTestDataSource();
    // The survivor, in this process, with the query service the killed gateway also talks to.
    stack = await startTestStack({
      services: [{ queue: Queues.QueryRpc, module: QueryModule }],
      access: { burstCapacity: 100_000, burstRatePerSecond: 100_000, leaseTtlMs: TTL_MS },
    });
  });

  afterAll(async () => {
    await doomed?.stop();
    await stack?.close();
    await db?.destroy();
  });

  const leaseRows = async (accountId: string) =>
    (await db.query(`SELECT holder, units FROM usage_leases WHERE account_id = $1`, [accountId])) as { holder: string; units: number }[];

  it('keeps its unspent units reserved until the lease expires, then gives them back; what it spent unsettled does not count', async () => {
    const account = await createTestAccount(db, { plan: '1k', used: 900 });
    const port = await freePort();
    doomed = startApp('gateway', {
      DATABASE_URL: process.env.DATABASE_URL!,
      RABBITMQ_URL: process.env.RABBITMQ_URL!,
      PORT: String(port),
      HOST: '127.0.0.1',
      METERING_ENABLED: 'true',
      METERING_LEASE_TTL_MS: String(TTL_MS),
      // Never idle within this test: the lease is held when the process dies.
      METERING_LEASE_IDLE_MS: '60000',
      BURST_RATE_PER_SECOND: '100000',
      BURST_CAPACITY: '100000',
      LOG_LEVEL: 'warn',
    });
    const doomedUrl = `http://127.0.0.1:${port}`;
    await waitForOk(`${doomedUrl}/health/ready`, 30_000);

    // 40 counted requests in quick succession: the lease grows 1, 2, 4, 8, 16, then 17 (a quarter
    // of the room left), so the gateway holds 48 units and has spent 40. Its last answer showed
    // what was left beyond all it had (its unspent units included): 60.
    let lastRemaining = '';
    for (let i = 0; i < 40; i += 1) {
      const res = await request(`${doomedUrl}${PATH}`, bearer(account.apiKey));
      expect(res.status).toBe(200);
      lastRemaining = res.headers.get('x-ratelimit-remaining')!;
    }
    expect(lastRemaining).toBe('60');

    doomed.child.kill('SIGKILL');
    await doomed.stop();
    const killedAt = Date.now();
    // A statement it sent just before dying may still be applied: read once the server is done.
    await new Promise((resolve) => setTimeout(resolve, 100));

    // The ledger as the dead gateway left it: whatever it settled is used; the rest of its units
    // (48 when the grants came within a second of each other, as they do here) is reserved by its
    // lease — more than it spent.
    const [lease] = await leaseRows(account.accountId);
    const before = await getUsage(pgPoolOf(db), account.accountId);
    const held = before.used + before.reserved;
    expect(held).toBeGreaterThan(940);
    expect(before.used).toBeLessThanOrEqual(940);
    expect(lease.units).toBe(before.reserved);

    // The survivor hands out only what is not reserved: its user sees every unit the lease held as gone.
    const during = await request(`${stack.url}${PATH}`, bearer(account.apiKey));
    expect(during.status).toBe(200);
    expect(during.headers.get('x-ratelimit-remaining')).toBe(String(1000 - held - 1));

    // Within the TTL and one sweep (a third of it): the lease is gone, its units are back.
    let after = await getUsage(pgPoolOf(db), account.accountId);
    while ((after.reserved > 0 || (await leaseRows(account.accountId)).length > 0) && Date.now() - killedAt < 3 * TTL_MS) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      after = await getUsage(pgPoolOf(db), account.accountId);
    }
    const releasedAfterMs = Date.now() - killedAt;
    expect(after).toMatchObject({ used: before.used + 1, reserved: 0 });
    expect(await leaseRows(account.accountId)).toEqual([]);
    expect(releasedAfterMs).toBeLessThanOrEqual(TTL_MS + TTL_MS / 3 + 500);

    // The user sees them again: every unit not settled as used is remaining.
    const later = await request(`${stack.url}${PATH}`, bearer(account.apiKey));
    expect(later.status).toBe(200);
    expect(later.headers.get('x-ratelimit-remaining')).toBe(String(1000 - (before.used + 1) - 1));
  });
});
