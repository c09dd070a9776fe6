import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';

/** The machine's Redis (the burst limit's store). */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix of this spec's own, so runs and specs never share buckets. */
export function uniqueRedisPrefix(label: string): string {
  return `cars-test:${process.env.TEST_RUN_ID ?? 'run'}:${label}:${randomBytes(4).toString('hex')}:`;
}

/** Deletes every key under the prefix; returns how many there were. */
export async function deleteRedisPrefix(prefix: string): Promise<number> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    let deleted = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== '0');
    return deleted;
  } finally {
    redis.disconnect();
  }
}

export async function countRedisPrefix(prefix: string): Promise<number> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    return (await redis.keys(`${prefix}*`)).length;
  } finally {
    redis.disconnect();
  }
}
