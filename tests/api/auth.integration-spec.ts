import { revokeApiKey, setPlan } from '@cars/accounts';
import { Queues } from '@cars/contracts';
import { QueryModule } from '@cars/service-query';
import { openTestDataSource } from '@cars/testing';
import { DataSource } from 'typeorm';
import { AccessProbeModule } from './support/access-probe.module';
import { createTestAccount } from './support/accounts';
import { bearer, request } from './support/http';
import { startTestStack, TestStack } from './support/stack';
import { pgPoolOf } from '@cars/persistence';

const KEY_CACHE_TTL_MS = 1500;

/** Authentication and plans at the gateway (docs/api/accounts.md; the errors table of README.md). */
describe('API keys and plans', () => {
  let stack: TestStack;
  let db: DataSource;
  /** How far the gateway's clock (plan expiry) runs ahead of the wall clock. */
  let clockAheadMs = 0;

  beforeAll(async () => {
    db = await openTestDataSource();
    stack = await startTestStack({
      services: [{ queue: Queues.QueryRpc, module: QueryModule }],
      gatewayImports: [AccessProbeModule],
      // No Redis: per-process buckets are enough here (the burst spec covers Redis).
      access: {
        redisUrl: undefined,
        keyCacheTtlMs: KEY_CACHE_TTL_MS,
        burstCapacity: 1000,
        burstRatePerSecond: 1000,
        now: () => new Date(Date.now() + clockAheadMs),
      },
    });
  });

  afterAll(async () => {
    await stack?.close();
    await db?.destroy();
  });

  const url = (path: string) => `${stack.url}${path}`;

  it('answers a missing key with 401 Unauthorized saying a key is required through the Authorization bearer header', async () => {
    const res = await request(url('/probe-access/open'));
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Unauthorized', message: expect.any(String) });
    expect(res.body.message).toMatch(/API key is required/);
    expect(res.body.message).toContain('Authorization: Bearer <API_KEY>');
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('answers every kind of invalid key with the same 401', async () => {
    const account = await createTestAccount(db);
    const attempts: Record<string, string>[] = [
      { authorization: 'Bearer' },
      { authorization: `Basic ${Buffer.from('user:pass').toString('base64')}` },
      { authorization: account.apiKey },
      { authorization: 'Bearer not-a-key' },
      { authorization: `Bearer ${account.apiKey.slice(0, -1)}${account.apiKey.endsWith('A') ? 'B' : 'A'}` },
      { authorization: `Bearer cca_live_${'0'.repeat(32)}` },
      { authorization: `Bearer ${account.apiKey} extra` },
      { 'x-api-key': account.apiKey },
    ];
    for (const headers of attempts) {
      const res = await request(url('/probe-access/counted'), { headers });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('Unauthorized');
      expect(res.body.message).toContain('Authorization: Bearer <API_KEY>');
      expect(Object.keys(res.body)).toEqual(['error', 'message']);
    }
  });

  it('accepts a valid key (scheme case-insensitive) and passes the account to the route', async () => {
    const account = await createTestAccount(db);
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const res = await request(url('/probe-access/open'), { headers: { authorization: `${scheme} ${account.apiKey}` } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true, account_id: account.accountId });
    }
  });

  it('leaves /makes, /models, /health/*, /docs, /openapi.json and @Public() routes open', async () => {
    const paths = ['/makes', '/models?make=Porsche', '/health/live', '/health/ready', '/docs', '/openapi.json', '/probe-access/public'];
    for (const path of paths) {
      const res = await fetch(url(path));
      expect({ path, status: res.status }).toEqual({ path, status: expect.any(Number) });
      expect({ path, unauthorized: res.status === 401 }).toEqual({ path, unauthorized: false });
    }
  });

  it('stops accepting a revoked key within the key cache window', async () => {
    const account = await createTestAccount(db);
    expect((await request(url('/probe-access/open'), bearer(account.apiKey))).status).toBe(200);
    await revokeApiKey(pgPoolOf(db), account.keyPrefix);
    const revokedAt = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - revokedAt < KEY_CACHE_TTL_MS + 3000) {
      status = (await request(url('/probe-access/open'), bearer(account.apiKey))).status;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe(401);
    // The cache window, plus the polling interval and request latency of a busy test machine.
    expect(Date.now() - revokedAt).toBeLessThanOrEqual(KEY_CACHE_TTL_MS + 1000);
  });

  it('answers 403 Forbidden on a paid-only route for the free plan, before counting anything', async () => {
    const free = await createTestAccount(db, { plan: 'free' });
    const res = await request(url('/probe-access/paid'), bearer(free.apiKey));
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: 'Forbidden',
      message: 'Pricing statistics requires an active paid plan (1K, 10K or 100K); this account is on the Free plan',
    });
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    for (const plan of ['1k', '10k', '100k'] as const) {
      const paid = await createTestAccount(db, { plan });
      expect((await request(url('/probe-access/paid'), bearer(paid.apiKey))).status).toBe(200);
    }
  });

  it('treats a paid plan past plan_expires_at as free', async () => {
    const expiresAt = new Date(Date.now() - 60_000);
    const lapsed = await createTestAccount(db, { plan: '1k', planExpiresAt: expiresAt });
    const res = await request(url('/probe-access/paid'), bearer(lapsed.apiKey));
    expect(res.status).toBe(403);
    expect(res.body.message).toBe(
      `Pricing statistics requires an active paid plan (1K, 10K or 100K); the 1K plan of this account expired on ${expiresAt.toISOString()}, so it is on the Free plan`,
    );
    const counted = await request(url('/probe-access/counted'), bearer(lapsed.apiKey));
    expect(counted.headers.get('x-ratelimit-limit')).toBe('100');

    const current = await createTestAccount(db, { plan: '1k', planExpiresAt: new Date(Date.now() + 86_400_000) });
    expect((await request(url('/probe-access/paid'), bearer(current.apiKey))).status).toBe(200);
  });

  it('expires a plan while its key is cached (expiry is checked per request, not per cache fill)', async () => {
    const expiresAt = new Date(Date.now() + 60_000);
    const account = await createTestAccount(db, { plan: '10k', planExpiresAt: expiresAt });
    const cachedAt = Date.now();
    expect((await request(url('/probe-access/paid'), bearer(account.apiKey))).status).toBe(200);
    // The gateway's clock passes the expiry; the key stays cached (the cache runs on its own clock).
    clockAheadMs = 60_001;
    try {
      expect((await request(url('/probe-access/paid'), bearer(account.apiKey))).status).toBe(403);
    } finally {
      clockAheadMs = 0;
    }
    // …while the key was still cached from the first request.
    expect(Date.now() - cachedAt).toBeLessThan(KEY_CACHE_TTL_MS);
  });

  it('applies a plan change within the key cache window', async () => {
    const account = await createTestAccount(db, { plan: 'free' });
    expect((await request(url('/probe-access/paid'), bearer(account.apiKey))).status).toBe(403);
    await setPlan(pgPoolOf(db), { accountId: account.accountId, plan: '1k' });
    const changedAt = Date.now();
    let status = 403;
    while (status === 403 && Date.now() - changedAt < KEY_CACHE_TTL_MS + 3000) {
      status = (await request(url('/probe-access/paid'), bearer(account.apiKey))).status;
      if (status === 403) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe(200);
    // The cache window, plus the polling interval and request latency of a busy test machine.
    expect(Date.now() - changedAt).toBeLessThanOrEqual(KEY_CACHE_TTL_MS + 1000);
    const res = await request(url('/probe-access/counted'), bearer(account.apiKey));
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
  });

  it('answers unknown routes with 404 whether or not a key is sent', async () => {
    expect((await request(url('/no-such-route'))).status).toBe(404);
    const account = await createTestAccount(db);
    expect((await request(url('/no-such-route'), bearer(account.apiKey))).status).toBe(404);
  });
});
