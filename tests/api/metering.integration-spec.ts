import { billingPeriod, getUsage, setUsedUnits } from '@cars/accounts';
import { openTestDataSource } from '@cars/testing';
import { DataSource } from 'typeorm';
import { AccessProbeModule } from './support/access-probe.module';
import { createTestAccount, settledUsage, TestAccount } from './support/accounts';
import { bearer, request } from './support/http';
import { deleteRedisPrefix, TEST_REDIS_URL, uniqueRedisPrefix } from './support/redis';
import { startTestStack, TestStack } from './support/stack';
import { pgPoolOf } from '@cars/persistence';

/** Monthly allowance through the gateway: what counts, the 429, the headers, exactness under concurrency. */
describe('monthly allowance (metering)', () => {
  let stack: TestStack;
  let db: DataSource;
  const redisPrefix = uniqueRedisPrefix('metering');

  beforeAll(async () => {
    db = await openTestDataSource();
    stack = await startTestStack({
      services: [],
      gatewayImports: [AccessProbeModule],
      // A burst limit far above these tests' traffic: only the monthly allowance answers 429 here.
      access: { redisUrl: TEST_REDIS_URL, redisKeyPrefix: redisPrefix, burstCapacity: 10000, burstRatePerSecond: 10000 },
    });
  });

  afterAll(async () => {
    await stack?.close();
    await db?.destroy();
    await deleteRedisPrefix(redisPrefix);
  });

  const get = (path: string, account: TestAccount) => request(`${stack.url}${path}`, bearer(account.apiKey));
  const usage = (account: TestAccount) => settledUsage(db, account.accountId);

  it('1K plan at 990: of 100 concurrent counted requests exactly 10 succeed, 90 get 429, and the ledger says 1,000', async () => {
    const account = await createTestAccount(db, { plan: '1k', used: 990 });
    const responses = await Promise.all(Array.from({ length: 100 }, () => get('/probe-access/counted', account)));

    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(90);
    expect(await usage(account)).toEqual({ used: 1000, reserved: 0 });

    const rejected = responses.find((r) => r.status === 429)!;
    expect(rejected.body).toEqual({
      error: 'Rate Limit Exceeded',
      message: expect.stringContaining('Monthly request limit of 1,000 for the 1K plan exceeded'),
    });
    expect(rejected.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(rejected.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(rejected.headers.get('retry-after')).toBeNull();

    const remaining = responses
      .filter((r) => r.status === 200)
      .map((r) => Number(r.headers.get('x-ratelimit-remaining')))
      .sort((a, b) => a - b);
    expect(remaining[0]).toBe(0);
    expect(remaining.every((n) => n >= 0 && n <= 9)).toBe(true);

    // Still exhausted afterwards, and a rejected request changes nothing.
    expect((await get('/probe-access/counted', account)).status).toBe(429);
    expect(await usage(account)).toEqual({ used: 1000, reserved: 0 });
  });

  it('stays exact when requests that do not count race for the last units', async () => {
    const account = await createTestAccount(db, { plan: '1k', used: 995 });
    const paths = Array.from({ length: 60 }, (_, i) =>
      i % 3 === 0 ? '/probe-access/counted' : i % 3 === 1 ? '/probe-access/counted?n=99' : '/probe-access/fail?status=503',
    );
    const responses = await Promise.all(paths.map((path) => get(path, account)));
    const ok = responses.filter((r) => r.status === 200).length;
    expect(ok).toBeLessThanOrEqual(5);
    expect(ok).toBeGreaterThan(0);
    expect(await usage(account)).toEqual({ used: 995 + ok, reserved: 0 });
  });

  it('sends X-RateLimit-Limit, -Remaining and -Reset (Unix seconds of the next period) on counted responses', async () => {
    const account = await createTestAccount(db, { plan: '10k', used: 41 });
    const res = await get('/probe-access/counted', account);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('10000');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('9958');
    expect(res.headers.get('x-ratelimit-reset')).toBe(String(billingPeriod().end.getTime() / 1000));

    const free = await get('/probe-access/open', account);
    expect(free.status).toBe(200);
    expect(free.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('counts 2xx and 404 once; not 400, 401, 403, 429 or 5xx; never uncounted routes', async () => {
    const account = await createTestAccount(db, { plan: '1k' });
    const expectUsed = async (used: number) => expect(await usage(account)).toEqual({ used, reserved: 0 });

    expect((await get('/probe-access/counted?n=3', account)).status).toBe(200);
    await expectUsed(1);
    const notFound = await get('/probe-access/items/5000', account);
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get('x-ratelimit-remaining')).toBe('998');
    await expectUsed(2);

    const invalid = await get('/probe-access/counted?n=99', account);
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toBe('Validation Error');
    expect(invalid.headers.get('x-ratelimit-remaining')).toBe('998');
    expect((await get('/probe-access/counted?nn=1', account)).status).toBe(400);
    expect((await get('/probe-access/items/abc', account)).status).toBe(400);
    await expectUsed(2);

    expect((await request(`${stack.url}/probe-access/counted`)).status).toBe(401);
    // A key one character off (its last character changed, whatever it was).
    const wrongKey = `${account.apiKey.slice(0, -1)}${account.apiKey.endsWith('x') ? 'y' : 'x'}`;
    expect((await request(`${stack.url}/probe-access/counted`, bearer(wrongKey))).status).toBe(401);
    await expectUsed(2);

    const unavailable = await get('/probe-access/fail?status=503', account);
    expect(unavailable.status).toBe(503);
    const crashed = await get('/probe-access/fail?status=500', account);
    expect(crashed.status).toBe(500);
    expect(crashed.body).toEqual({ error: 'Internal Server Error', message: 'An unexpected error occurred' });
    await expectUsed(2);

    expect((await get('/probe-access/open', account)).status).toBe(200);
    await expectUsed(2);

    const free = await createTestAccount(db, { plan: 'free' });
    expect((await get('/probe-access/paid', free)).status).toBe(403);
    expect(await settledUsage(db, free.accountId)).toEqual({ used: 0, reserved: 0 });

    await setUsedUnits(pgPoolOf(db), account.accountId, 1000);
    expect((await get('/probe-access/counted', account)).status).toBe(429);
    await expectUsed(1000);
  });

  it('holds a unit while a request is in flight, and gives it back when the client goes away', async () => {
    // One unit left: the gateway can hold no block ahead of the request (with room it may, and the
    // ledger's reserved would count that block too), so the ledger shows exactly the request's unit.
    const account = await createTestAccount(db, { plan: '1k', used: 999 });
    const controller = new AbortController();
    const pending = fetch(`${stack.url}/probe-access/slow?ms=1500`, { ...bearer(account.apiKey), signal: controller.signal }).catch(
      (error: unknown) => error,
    );
    let inFlight = await getUsage(pgPoolOf(db), account.accountId);
    for (let i = 0; i < 100 && inFlight.reserved === 0; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      inFlight = await getUsage(pgPoolOf(db), account.accountId);
    }
    expect(inFlight).toMatchObject({ used: 999, reserved: 1 });
    controller.abort();
    expect(String(await pending)).toMatch(/abort/i);
    // The handler finishes after the client left (settledUsage waits for that): the unit is
    // released, not committed.
    expect(await settledUsage(db, account.accountId)).toEqual({ used: 999, reserved: 0 });

    // Completed, the same request counts.
    expect((await get('/probe-access/slow?ms=50', account)).status).toBe(200);
    expect(await usage(account)).toEqual({ used: 1000, reserved: 0 });
  });

  it('gives the free plan 100 requests a month and names it in the 429', async () => {
    const account = await createTestAccount(db, { plan: 'free', used: 99 });
    const ok = await get('/probe-access/counted', account);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-ratelimit-limit')).toBe('100');
    expect(ok.headers.get('x-ratelimit-remaining')).toBe('0');
    const over = await get('/probe-access/counted', account);
    expect(over.status).toBe(429);
    expect(over.body).toEqual({
      error: 'Rate Limit Exceeded',
      message: expect.stringContaining('Monthly request limit of 100 for the Free plan exceeded'),
    });
    // Routes that do not count stay available with an exhausted allowance.
    expect((await get('/probe-access/open', account)).status).toBe(200);
  });

  it('counts an expired paid plan against the free allowance', async () => {
    const account = await createTestAccount(db, { plan: '10k', used: 100, planExpiresAt: new Date(Date.now() - 1000) });
    const res = await get('/probe-access/counted', account);
    expect(res.status).toBe(429);
    expect(res.body.message).toContain('Monthly request limit of 100 for the Free plan exceeded');
  });

  it('starts every calendar month (UTC) from zero', async () => {
    const account = await createTestAccount(db, { plan: '1k' });
    await db.query(`INSERT INTO usage_ledger (account_id, period, used, reserved) VALUES ($1, $2, 1000, 0)`, [
      account.accountId,
      '2020-01-01',
    ]);
    const res = await get('/probe-access/counted', account);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-remaining')).toBe('999');
  });
});
