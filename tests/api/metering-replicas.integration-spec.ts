import { getUsage } from '@cars/accounts';
import { pgPoolOf } from '@cars/persistence';
import { openTestDataSource } from '@cars/testing';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import { loadApiAccessConfig } from '@cars/service-gateway';
import { AccessProbeModule } from './support/access-probe.module';
import { createTestAccount, settledUsage } from './support/accounts';
import { bearer, request } from './support/http';
import { deleteRedisPrefix, TEST_REDIS_URL, uniqueRedisPrefix } from './support/redis';
import { startTestGateway, startTestStack, TestStack } from './support/stack';

/**
 * Two gateway replicas with the leases' default idle time (10 s; the other specs' gateways close an
 * unused lease after 250 ms): a slow client keeps its lease between requests, and near the limit
 * the replicas still serve exactly the allowance and give back what they did not spend.
 */
describe('metering across replicas, default lease idle time', () => {
  const redisPrefix = uniqueRedisPrefix('replicas');
  const idleMs = loadApiAccessConfig({}).leaseIdleMs;
  let db: DataSource;
  let stack: TestStack;
  let second: { url: string; gateway: NestFastifyApplication } | undefined;

  beforeAll(async () => {
    db = await openTestDataSource();
    const access = { redisUrl: TEST_REDIS_URL, redisKeyPrefix: redisPrefix, burstCapacity: 10000, burstRatePerSecond: 10000, leaseIdleMs: idleMs };
    stack = await startTestStack({ services: [], gatewayImports: [AccessProbeModule], access });
    second = await startTestGateway({ gatewayImports: [AccessProbeModule], access });
  });

  afterAll(async () => {
    await second?.gateway.close();
    await stack?.close();
    await db?.destroy();
    await deleteRedisPrefix(redisPrefix);
  });

  const leases = async (accountId: string) =>
    (await db.query(`SELECT id, units FROM usage_leases WHERE account_id = $1`, [accountId])) as { id: string; units: number }[];

  it('keeps a slow client\'s lease between its requests: one lease, never closed, every request counted once', async () => {
    expect(idleMs).toBeGreaterThanOrEqual(5000); // the default: unused leases live for seconds
    const account = await createTestAccount(db, { plan: '1k' });
    const seen = new Set<string>();
    for (let i = 0; i < 5; i += 1) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 600)); // longer than the settle interval and the near-limit idle time
      const response = await request(`${stack.url}/probe-access/counted`, bearer(account.apiKey));
      expect(response.status).toBe(200);
      for (const lease of await leases(account.accountId)) seen.add(lease.id);
    }
    // The same lease served all five: it was never closed and taken out again.
    expect(seen.size).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1500)); // a settlement, still no close
    const [lease] = await leases(account.accountId);
    expect(lease?.id).toBe([...seen][0]);
    const usage = await getUsage(pgPoolOf(db), account.accountId);
    expect(usage.used).toBe(5);
    // What the lease holds beyond the spent units: its next block, asked for ahead.
    expect(usage.reserved).toBe(lease.units);
    expect(usage.reserved).toBeGreaterThan(0);
  });

  it('1K plan at 990, 100 concurrent counted requests over both replicas: exactly 10 × 200 and 90 × 429; the ledger says 1,000', async () => {
    const account = await createTestAccount(db, { plan: '1k', used: 990 });
    const urls = [stack.url, second!.url];
    const responses = await Promise.all(Array.from({ length: 100 }, (_, i) => request(`${urls[i % 2]}/probe-access/counted`, bearer(account.apiKey))));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(90);
    // Near the limit an unused lease gives its units back after 250 ms, whatever the idle time.
    expect(await settledUsage(db, account.accountId, 3000)).toEqual({ used: 1000, reserved: 0 });
  });
});
