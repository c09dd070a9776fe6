import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { openTestDataSource } from '@cars/testing';
import { DataSource } from 'typeorm';
import { AccessProbeModule } from './support/access-probe.module';
import { createTestAccount } from './support/accounts';
import { bearer, request } from './support/http';
import { AppProcess, freePort, startApp, waitForOk } from './support/processes';
import { startTestGateway } from './support/stack';

const run = promisify(execFile);
const ADMIN = join(__dirname, '../../dist/tools/admin/src/main.js');

/**
 * Account changes bite at once on every gateway replica: two gateway processes with a long key
 * cache (30 s) and warm caches; after each operator command both answer the new way within 1 s,
 * because the database broadcasts the change (LISTEN/NOTIFY) and each gateway evicts what it held.
 * No public read route needs a verified email yet, so that case runs on two in-process replicas
 * with a probe route that does.
 */
describe('account changes reach every gateway at once', () => {
  const apps: AppProcess[] = [];
  const gateways: string[] = [];
  let db: DataSource;
  const measured: Record<string, number[]> = {};

  const env = (extra: Record<string, string>) => ({
    DATABASE_URL: process.env.DATABASE_URL!,
    RABBITMQ_URL: process.env.RABBITMQ_URL!,
    DATABASE_POOL_SIZE: '3',
    ...extra,
  });

  const admin = async (...args: string[]) => {
    await run(process.execPath, [ADMIN, ...args], { env: { ...process.env } });
  };

  /** Polls both gateways until each answers `expected`; the time each took after the command returned. */
  async function timeUntil(label: string, path: string, apiKey: string, expected: number, urls = gateways): Promise<number[]> {
    const started = Date.now();
    const times = await Promise.all(
      urls.map(async (url) => {
        for (;;) {
          const res = await request(`${url}${path}`, bearer(apiKey));
          if (res.status === expected) return Date.now() - started;
          if (Date.now() - started > 15_000) throw new Error(`${label}: ${url}${path} still ${res.status} after 15 s`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }),
    );
    measured[label] = times;
    return times;
  }

  /** Both gateways answer `status` now (and have it cached). */
  async function expectBoth(path: string, apiKey: string, status: number): Promise<void> {
    for (const url of gateways) {
      for (let i = 0; i < 2; i += 1) expect({ url, path, status: (await request(`${url}${path}`, bearer(apiKey))).status }).toEqual({ url, path, status });
    }
  }

  beforeAll(async () => {
    db = await openTestDataSource();
    for (const name of ['query', 'stats']) apps.push(startApp(name, env({ HEALTH_PORT: String(await freePort()) })));
    for (let i = 0; i < 2; i += 1) {
      const port = await freePort();
      apps.push(startApp('gateway', env({ PORT: String(port), HOST: '127.0.0.1', API_KEY_CACHE_TTL_MS: '30000' })));
      gateways.push(`http://127.0.0.1:${port}`);
    }
    for (const url of gateways) await waitForOk(`${url}/health/ready`, 30_000);
    await db.query(`INSERT INTO makes (name) VALUES ('Porsche') ON CONFLICT DO NOTHING`);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()));
    await db?.destroy();
    console.log(
      `account change → effect on both gateways (ms, gateway 1 / gateway 2): ${Object.entries(measured)
        .map(([label, times]) => `${label} ${times.join(' / ')}`)
        .join('; ')}`,
    );
  });

  it('lifts the 429 of a 1K account at its limit as soon as it is upgraded', async () => {
    const account = await createTestAccount(db, { plan: '1k', used: 1000 });
    await expectBoth('/auctions?limit=1', account.apiKey, 429);
    await admin('accounts:set-plan', '--account', account.accountId, '--plan', '10k');
    const times = await timeUntil('set-plan 1k→10k', '/auctions?limit=1', account.apiKey, 200);
    for (const ms of times) expect(ms).toBeLessThan(1000);
  }, 30_000);

  it('closes /stats to a 10K account downgraded to free', async () => {
    const account = await createTestAccount(db, { plan: '10k' });
    await expectBoth('/stats?make=Porsche', account.apiKey, 200);
    await admin('accounts:set-plan', '--account', account.accountId, '--plan', 'free');
    const times = await timeUntil('set-plan 10k→free', '/stats?make=Porsche', account.apiKey, 403);
    for (const ms of times) expect(ms).toBeLessThan(1000);
  }, 30_000);

  it('opens a route that needs a verified email once the email is verified', async () => {
    const account = await createTestAccount(db, { plan: '10k', verified: false });
    const path = '/probe-access/verified';
    const probes = await Promise.all([0, 1].map(() => startTestGateway({ gatewayImports: [AccessProbeModule], access: { keyCacheTtlMs: 30_000 } })));
    const urls = probes.map((probe) => probe.url);
    try {
      for (const url of urls) expect((await request(`${url}${path}`, bearer(account.apiKey))).status).toBe(403);
      await admin('accounts:verify-email', '--account', account.accountId);
      const times = await timeUntil('verify-email', path, account.apiKey, 200, urls);
      for (const ms of times) expect(ms).toBeLessThan(1000);
    } finally {
      for (const probe of probes) await probe.gateway.close();
    }
  }, 30_000);

  it('refuses a revoked key', async () => {
    const account = await createTestAccount(db, { plan: '100k' });
    await expectBoth('/auctions?limit=1', account.apiKey, 200);
    await admin('keys:revoke', '--key-prefix', account.keyPrefix);
    const times = await timeUntil('keys:revoke', '/auctions?limit=1', account.apiKey, 401);
    for (const ms of times) expect(ms).toBeLessThan(1000);
  }, 30_000);
});
