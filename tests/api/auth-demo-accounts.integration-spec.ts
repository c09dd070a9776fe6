import { apiKeyPrefix, ApiKeysRepository, ensureDemoAccounts, hashApiKey, revokeApiKey } from '@cars/accounts';
import { createDataSource, pgPoolOf } from '@cars/persistence';
import { createIsolatedDatabase } from '@cars/testing';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import { AccessProbeModule } from './support/access-probe.module';
import { bearer, request } from './support/http';
import { startTestGateway } from './support/stack';

/** Demo accounts of the quick start, in a database of their own (the spec revokes a demo key). */
describe('demo accounts', () => {
  let isolated: { url: string; drop: () => Promise<void> };
  let db: DataSource;
  let gateway: { url: string; gateway: NestFastifyApplication };

  beforeAll(async () => {
    isolated = await createIsolatedDatabase('demo_accounts');
    db = await createDataSource({ url: isolated.url, poolSize: 4 }).initialize();
    gateway = await startTestGateway({
      databaseUrl: isolated.url,
      gatewayImports: [AccessProbeModule],
      access: { redisUrl: undefined, keyCacheTtlMs: 0 },
    });
  }, 30_000);

  afterAll(async () => {
    await gateway?.gateway.close();
    await db?.destroy();
    await isolated?.drop();
  });

  it('creates one verified account per plan once, and returns the same working keys on every call', async () => {
    const [first, second] = await Promise.all([ensureDemoAccounts(pgPoolOf(db)), ensureDemoAccounts(pgPoolOf(db))]);
    expect(first.map((d) => [d.plan, d.planName, d.monthlyLimit, d.email])).toEqual([
      ['free', 'Free', 100, 'free@demo.invalid'],
      ['1k', '1K', 1000, '1k@demo.invalid'],
      ['10k', '10K', 10000, '10k@demo.invalid'],
      ['100k', '100K', 100000, '100k@demo.invalid'],
    ]);
    expect(second).toEqual(first);
    expect(await ensureDemoAccounts(pgPoolOf(db))).toEqual(first);

    const accounts: { plan: string; email_verified: boolean }[] = await db.query(`SELECT plan, email_verified FROM accounts`);
    expect(accounts).toHaveLength(4);
    expect(accounts.every((a) => a.email_verified)).toBe(true);
    const stored = JSON.stringify(await db.query(`SELECT * FROM api_keys`));
    for (const demo of first) expect(stored).not.toContain(demo.apiKey);

    for (const demo of first) {
      const paid = await request(`${gateway.url}/probe-access/paid`, bearer(demo.apiKey));
      expect({ plan: demo.plan, status: paid.status }).toEqual({ plan: demo.plan, status: demo.plan === 'free' ? 403 : 200 });
      const counted = await request(`${gateway.url}/probe-access/counted`, bearer(demo.apiKey));
      expect(counted.headers.get('x-ratelimit-limit')).toBe(String(demo.monthlyLimit));
    }
  });

  it('moves to a fresh key when an operator revokes a demo key', async () => {
    const before = await ensureDemoAccounts(pgPoolOf(db));
    const revoked = before.find((d) => d.plan === '10k')!;
    await revokeApiKey(pgPoolOf(db), apiKeyPrefix(revoked.apiKey));
    const after = await ensureDemoAccounts(pgPoolOf(db));
    const replaced = after.find((d) => d.plan === '10k')!;
    expect(replaced.accountId).toBe(revoked.accountId);
    expect(replaced.apiKey).not.toBe(revoked.apiKey);
    expect(await new ApiKeysRepository(pgPoolOf(db)).findActiveHolder(hashApiKey(replaced.apiKey))).not.toBeNull();
    expect(await ensureDemoAccounts(pgPoolOf(db))).toEqual(after);
    expect(after.filter((d) => d.plan !== '10k')).toEqual(before.filter((d) => d.plan !== '10k'));
    expect((await request(`${gateway.url}/probe-access/open`, bearer(revoked.apiKey))).status).toBe(401);
    expect((await request(`${gateway.url}/probe-access/open`, bearer(replaced.apiKey))).status).toBe(200);
  });
});
