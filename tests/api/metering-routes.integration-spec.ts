import { randomBytes } from 'node:crypto';
import { openTestDataSource } from '@cars/testing';
import { DataSource } from 'typeorm';
import { createTestAccount, settledUsage, TestAccount } from './support/accounts';
import { bearer, request } from './support/http';
import { deleteRedisPrefix, TEST_REDIS_URL, uniqueRedisPrefix } from './support/redis';
import { startTestStack, TestStack } from './support/stack';

/**
 * API access on the real routes, with the query and stats services behind RabbitMQ: which
 * routes are public, counted or paid-only, and the monthly allowance under concurrency.
 */
describe('API access on the real routes', () => {
  let stack: TestStack;
  let db: DataSource;
  const redisPrefix = uniqueRedisPrefix('routes');

  beforeAll(async () => {
    db = await openTestDataSource();
    stack = await startTestStack({
      // Concurrency beyond the in-flight cap is the fair-share spec's subject: here the allowance's.
      access: { redisUrl: TEST_REDIS_URL, redisKeyPrefix: redisPrefix, burstCapacity: 10000, burstRatePerSecond: 10000, maxInFlightPerAccount: 1000 },
    });
  }, 30_000);

  afterAll(async () => {
    await stack?.close();
    await db?.destroy();
    await deleteRedisPrefix(redisPrefix);
  });

  const get = (path: string, account?: TestAccount) =>
    request(`${stack.url}${path}`, account ? bearer(account.apiKey) : {});
  const used = async (account: TestAccount) => {
    const usage = await settledUsage(db, account.accountId);
    expect(usage.reserved).toBe(0);
    return usage.used;
  };

  it('requires a key on every counted route, with the documented 401 body', async () => {
    // A route that takes no parameters refuses unknown ones only once the key is checked.
    const noParameters = '/webhooks/00000000-0000-4000-8000-000000000000?colour=red';
    for (const path of ['/auctions', '/auctions/live', '/auctions/1/bids', '/stats?make=Porsche', noParameters]) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 401 });
      expect(res.body).toEqual({ error: 'Unauthorized', message: expect.stringContaining('Authorization: Bearer <API_KEY>') });
    }
  });

  it('counts /auctions, /auctions/live and a 404 of the bids route once each; not 400s; not /makes', async () => {
    const account = await createTestAccount(db, { plan: '1k' });
    const search = await get('/auctions?limit=1', account);
    expect(search.status).toBe(200);
    expect(search.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(search.headers.get('x-ratelimit-remaining')).toBe('999');
    expect(await used(account)).toBe(1);

    expect((await get('/auctions/live?limit=1', account)).status).toBe(200);
    expect(await used(account)).toBe(2);

    const missing = await get('/auctions/2147480000/bids', account);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-ratelimit-remaining')).toBe('997');
    expect(await used(account)).toBe(3);

    for (const path of ['/auctions?limit=500', '/auctions?colour=red', '/auctions/0/bids', '/auctions/abc/bids', '/auctions/live?sort=nope']) {
      const res = await get(path, account);
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
    }
    expect(await used(account)).toBe(3);

    const unknown = await get('/makes?colour=red', account);
    expect(unknown.status).toBe(400);
    expect(unknown.body.details).toEqual({ colour: ['colour is not a recognised parameter'] });

    const makes = await get('/makes', account);
    expect(makes.status).toBeLessThan(500);
    expect(makes.headers.get('x-ratelimit-limit')).toBeNull();
    expect(await used(account)).toBe(3);
  });

  it('answers /stats with 403 Forbidden on the free plan, without counting; counts it on a paid plan', async () => {
    const free = await createTestAccount(db, { plan: 'free' });
    const forbidden = await get('/stats?make=Porsche', free);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({
      error: 'Forbidden',
      message: 'Pricing statistics requires an active paid plan (1K, 10K or 100K); this account is on the Free plan',
    });
    expect(await used(free)).toBe(0);

    const paid = await createTestAccount(db, { plan: '10k' });
    const make = `Test Make ${randomBytes(4).toString('hex')}`;
    await db.query(`INSERT INTO makes (name) VALUES ($1) ON CONFLICT DO NOTHING`, [make]);
    const stats = await get(`/stats?make=${encodeURIComponent(make)}`, paid);
    expect(stats.status).toBe(200);
    expect(stats.headers.get('x-ratelimit-limit')).toBe('10000');
    expect(await used(paid)).toBe(1);
    expect((await get('/stats', paid)).status).toBe(400);
    expect(await used(paid)).toBe(1);
  });

  it('1K plan at 990: 100 concurrent /auctions requests → exactly 10 × 200 and 90 × 429; the ledger says 1,000', async () => {
    const account = await createTestAccount(db, { plan: '1k', used: 990 });
    const responses = await Promise.all(Array.from({ length: 100 }, () => get('/auctions?limit=1', account)));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(90);
    expect(responses.find((r) => r.status === 429)!.body).toEqual({
      error: 'Rate Limit Exceeded',
      message: expect.stringMatching(/^Monthly request limit of 1,000 for the 1K plan exceeded/),
    });
    expect(await settledUsage(db, account.accountId)).toEqual({ used: 1000, reserved: 0 });
  }, 30_000);
});
