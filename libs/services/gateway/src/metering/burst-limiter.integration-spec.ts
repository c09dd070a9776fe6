import 'reflect-metadata';
import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { loadApiAccessConfig } from './api-access.config';
import { BurstLimiter } from './burst-limiter';
import type { BurstDecision } from './token-bucket';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A request every `gapMs`, as a busy client sends them: how many had to wait for Redis, and the answers. */
async function spend(limiter: BurstLimiter, key: string, requests: number, gapMs: number) {
  let waited = 0;
  const decisions: BurstDecision[] = [];
  for (let i = 0; i < requests; i += 1) {
    const decision = limiter.take(key);
    if (decision instanceof Promise) waited += 1;
    decisions.push(await decision);
    await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  return { waited, allowed: decisions.filter((d) => d.allowed).length };
}

describe('BurstLimiter (Redis)', () => {
  const prefix = `cars-test:${randomUUID()}:`;
  const limiters: BurstLimiter[] = [];

  async function limiter(capacity: number, ratePerSecond: number): Promise<BurstLimiter> {
    const config = loadApiAccessConfig({}, { redisUrl: REDIS_URL, redisKeyPrefix: prefix, burstCapacity: capacity, burstRatePerSecond: ratePerSecond });
    const created = new BurstLimiter(config);
    await created.onModuleInit();
    limiters.push(created);
    return created;
  }

  afterAll(async () => {
    for (const created of limiters) await created.onApplicationShutdown();
    const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('takes a busy key’s next block while half of the current one is left: its requests rarely wait for Redis', async () => {
    const busy = await limiter(100_000, 100_000);
    const { waited, allowed } = await spend(busy, 'busy-key', 300, 1);
    expect(allowed).toBe(300);
    // Blocks of 1, 2, 4 … 32: without taking ahead, every block's end is a wait (≥ 14 here).
    expect(waited).toBeLessThanOrEqual(4);
  });

  it('never takes ahead from the lower half of a bucket: two gateways still share the last tokens exactly', async () => {
    const capacity = 40;
    const [a, b] = [await limiter(capacity, 0.001), await limiter(capacity, 0.001)];
    let allowed = 0;
    for (let i = 0; i < capacity + 10; i += 1) {
      const decision = await (i % 2 === 0 ? a : b).take('shared-key');
      if (decision.allowed) allowed += 1;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(allowed).toBe(capacity);
  });
});
