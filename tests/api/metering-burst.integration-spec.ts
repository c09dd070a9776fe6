import { openTestDataSource } from '@cars/testing';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { AccessProbeModule } from './support/access-probe.module';
import { createTestAccount, settledUsage, TestAccount } from './support/accounts';
import { bearer, JsonResponse, request } from './support/http';
import { countRedisPrefix, deleteRedisPrefix, TEST_REDIS_URL, uniqueRedisPrefix } from './support/redis';
import { startTestGateway, startTestStack, TestStack } from './support/stack';

/**
 * Burst limit: a token bucket per API key in Redis, shared by gateway replicas. The rate here is
 * one token per 100 s, so no bucket refills by even one token while a test runs and every count
 * is exact; the bucket's clock is Redis's own (TIME), so a test that needs time to pass moves the
 * bucket's last refill back instead of sleeping.
 */
describe('burst limit', () => {
  const CAPACITY = 8;
  const RATE = 0.01;
  const redisPrefix = uniqueRedisPrefix('burst');
  let db: DataSource;
  let stack: TestStack;
  let second: { url: string; gateway: NestFastifyApplication };

  beforeAll(async () => {
    db = await openTestDataSource();
    const access = { redisUrl: TEST_REDIS_URL, redisKeyPrefix: redisPrefix, burstCapacity: CAPACITY, burstRatePerSecond: RATE };
    stack = await startTestStack({ services: [], gatewayImports: [AccessProbeModule], access });
    second = await startTestGateway({ gatewayImports: [AccessProbeModule], access });
  });

  afterAll(async () => {
    await second?.gateway.close();
    await stack?.close();
    await db?.destroy();
    await deleteRedisPrefix(redisPrefix);
    expect(await countRedisPrefix(redisPrefix)).toBe(0);
  });

  const statuses = (responses: JsonResponse[]) => ({
    ok: responses.filter((r) => r.status === 200).length,
    limited: responses.filter((r) => r.status === 429).length,
  });

  /** As if `seconds` had passed for the key's bucket: its last refill time (µs, Redis TIME) moved back. */
  async function ageBucket(account: TestAccount, seconds: number): Promise<void> {
    const [{ id }] = await db.query(`SELECT id FROM api_keys WHERE prefix = $1`, [account.keyPrefix]);
    const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    try {
      const key = `${redisPrefix}burst:${id}`;
      const ts = await redis.hget(key, 'ts');
      if (ts === null) throw new Error(`no bucket ${key}`);
      await redis.hset(key, 'ts', String(Number(ts) - seconds * 1_000_000));
    } finally {
      redis.disconnect();
    }
  }

  /** The tokens a key's bucket holds in Redis (fractional: it refills continuously). */
  async function bucketTokens(account: TestAccount): Promise<number> {
    const [{ id }] = await db.query(`SELECT id FROM api_keys WHERE prefix = $1`, [account.keyPrefix]);
    const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    try {
      return Number(await redis.hget(`${redisPrefix}burst:${id}`, 'tokens'));
    } finally {
      redis.disconnect();
    }
  }

  it('is shared by two gateway instances: one bucket per key across replicas', async () => {
    const account = await createTestAccount(db, { plan: '10k' });
    const urls = [stack.url, second.url];
    // CAPACITY requests alternating between the replicas: the shared bucket holds them all.
    const first: JsonResponse[] = [];
    for (let i = 0; i < CAPACITY; i += 1) first.push(await request(`${urls[i % 2]}/probe-access/open`, bearer(account.apiKey)));
    expect(first.map((r) => r.status)).toEqual(Array(CAPACITY).fill(200));
    // Alone, each replica would still hold CAPACITY / 2 tokens; shared, only what refilled meanwhile is left.
    const rest = await Promise.all(
      Array.from({ length: CAPACITY + 2 }, (_, i) => request(`${urls[i % 2]}/probe-access/open`, bearer(account.apiKey))),
    );
    expect(statuses(rest)).toEqual({ ok: 0, limited: CAPACITY + 2 });
    expect(await countRedisPrefix(redisPrefix)).toBe(1);
  });

  it('answers 429 Rate Limit Exceeded with Retry-After and a message naming the limit', async () => {
    const account = await createTestAccount(db, { plan: '1k' });
    const responses: JsonResponse[] = [];
    for (let i = 0; i < CAPACITY + 2; i += 1) responses.push(await request(`${second.url}/probe-access/open`, bearer(account.apiKey)));
    expect(responses.map((r) => r.status)).toEqual([...Array(CAPACITY).fill(200), 429, 429]);
    const limited = responses[CAPACITY];
    expect(limited.body).toEqual({
      error: 'Rate Limit Exceeded',
      message: `Burst limit exceeded: the 1K plan allows ${RATE} requests per second per API key, in bursts of up to ${CAPACITY}; retry after 100 s`,
    });
    expect(limited.headers.get('retry-after')).toBe('100');

    // A second short of Retry-After, the token is not back yet; at Retry-After, it is.
    await ageBucket(account, 99);
    const early = await request(`${stack.url}/probe-access/open`, bearer(account.apiKey));
    expect(early.status).toBe(429);
    expect(early.headers.get('retry-after')).toBe('1');
    await ageBucket(account, 1);
    expect((await request(`${stack.url}/probe-access/open`, bearer(account.apiKey))).status).toBe(200);
  });

  it('keeps one bucket per key, and a burst 429 on a counted route does not count', async () => {
    const a = await createTestAccount(db, { plan: '1k' });
    const b = await createTestAccount(db, { plan: '1k' });
    const burst = await Promise.all(
      Array.from({ length: CAPACITY + 6 }, () => request(`${stack.url}/probe-access/counted`, bearer(a.apiKey))),
    );
    expect(statuses(burst)).toEqual({ ok: CAPACITY, limited: 6 });
    expect(await settledUsage(db, a.accountId)).toEqual({ used: CAPACITY, reserved: 0 });
    expect((await request(`${stack.url}/probe-access/counted`, bearer(b.apiKey))).status).toBe(200);
  });

  it('applies to public routes never, and to unauthenticated requests never (they are 401 first)', async () => {
    for (let i = 0; i < CAPACITY * 2; i += 1) {
      expect((await request(`${stack.url}/probe-access/public`)).status).toBe(200);
      expect((await request(`${stack.url}/probe-access/open`)).status).toBe(401);
    }
  });

  it("takes a busy key's tokens in blocks from the bucket's upper half, and gives back what was not spent", async () => {
    const large = 100;
    const gateway = await startTestGateway({
      gatewayImports: [AccessProbeModule],
      access: { redisUrl: TEST_REDIS_URL, redisKeyPrefix: redisPrefix, burstCapacity: large, burstRatePerSecond: RATE },
    });
    try {
      const account = await createTestAccount(db, { plan: '10k' });
      for (let i = 0; i < 20; i += 1) expect((await request(`${gateway.url}/probe-access/open`, bearer(account.apiKey))).status).toBe(200);
      // 20 spent, and more taken: the gateway holds a block for the key's next requests.
      const held = await bucketTokens(account);
      expect(held).toBeLessThan(large - 20);
      expect(held).toBeGreaterThanOrEqual(large / 2);
      // Idle past twice the hold (1 s), the next request gives the unspent tokens back and takes one.
      await new Promise((resolve) => setTimeout(resolve, 2200));
      expect((await request(`${gateway.url}/probe-access/open`, bearer(account.apiKey))).status).toBe(200);
      expect(Math.floor(await bucketTokens(account))).toBe(large - 21);
    } finally {
      await gateway.gateway.close();
    }
  });
});

describe('burst limit without Redis', () => {
  let db: DataSource;

  beforeAll(async () => {
    db = await openTestDataSource();
  });

  afterAll(async () => {
    await db?.destroy();
  });

  it('fails open to per-process buckets while Redis is unreachable', async () => {
    // Port 1 on loopback: nothing listens, connections are refused at once.
    const gateway = await startTestGateway({
      gatewayImports: [AccessProbeModule],
      access: { redisUrl: 'redis://127.0.0.1:1', redisKeyPrefix: 'unused:', burstCapacity: 5, burstRatePerSecond: 0.01 },
    });
    try {
      const account = await createTestAccount(db, { plan: '1k' });
      const started = Date.now();
      const responses: JsonResponse[] = [];
      for (let i = 0; i < 8; i += 1) responses.push(await request(`${gateway.url}/probe-access/open`, bearer(account.apiKey)));
      expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 429]);
      // No request waited for Redis (connection refused at once; commands never queue).
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await gateway.gateway.close();
    }
  });

  it('uses per-process buckets when no REDIS_URL is configured', async () => {
    const gateway = await startTestGateway({
      gatewayImports: [AccessProbeModule],
      access: { redisUrl: undefined, burstCapacity: 3, burstRatePerSecond: 0.01 },
    });
    try {
      const account = await createTestAccount(db, { plan: '1k' });
      const codes: number[] = [];
      for (let i = 0; i < 5; i += 1) codes.push((await request(`${gateway.url}/probe-access/open`, bearer(account.apiKey))).status);
      expect(codes).toEqual([200, 200, 200, 429, 429]);
    } finally {
      await gateway.gateway.close();
    }
  });
});
