import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import Redis from 'ioredis';
import { API_ACCESS_CONFIG, ApiAccessConfig } from './api-access.config';
import { BurstDecision, LocalTokenBuckets, TOKEN_BUCKET_LUA } from './token-bucket';
import { errorMessage } from '@cars/contracts';

interface BucketRedis extends Redis {
  takeToken(key: string, ratePerSecond: number, capacity: number): Promise<[number, number, number]>;
}

/** A bucket's size and refill rate. */
export interface BucketLimit {
  ratePerSecond: number;
  capacity: number;
}

/** How often the "Redis is unavailable" warning may repeat. */
const WARN_EVERY_MS = 30000;

/**
 * The burst limit of every authenticated route: one token bucket per API key, kept in Redis so
 * all gateway replicas share it (one atomic Lua script per request).
 *
 * When Redis is unreachable or slow (REDIS_TIMEOUT_MS), the limiter fails open to per-process
 * buckets with a throttled warning: each replica then enforces the limit on its own share of
 * the traffic, so a key can reach at most N× the limit across N replicas. Failing closed would
 * turn a Redis outage into a full API outage for every paying customer, while the monthly
 * allowance — what customers pay for — stays exact in PostgreSQL either way.
 */
@Injectable()
export class BurstLimiter implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('BurstLimit');
  private readonly local: LocalTokenBuckets;
  /** Per-process buckets of the other limits (`takeFrom`), one set per size and rate. */
  private readonly otherLocal = new Map<string, LocalTokenBuckets>();
  private redis?: BucketRedis;
  private lastWarning = 0;

  constructor(@Inject(API_ACCESS_CONFIG) private readonly config: ApiAccessConfig) {
    this.local = new LocalTokenBuckets(config.burstRatePerSecond, config.burstCapacity);
  }

  async onModuleInit(): Promise<void> {
    if (!this.config.enabled) return;
    if (!this.config.redisUrl) {
      this.logger.warn('REDIS_URL is not set: burst limits are kept per process (fine for one process, not for replicas)');
      return;
    }
    const redis = new Redis(this.config.redisUrl, {
      lazyConnect: true,
      // Fail fast rather than queue while disconnected: the request falls back to the local bucket.
      enableOfflineQueue: false,
      commandTimeout: this.config.redisTimeoutMs,
      maxRetriesPerRequest: 0,
      connectTimeout: 2000,
      // Closing a connection that never opened otherwise keeps the process alive for 2 s.
      disconnectTimeout: 200,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    }) as BucketRedis;
    redis.defineCommand('takeToken', { numberOfKeys: 1, lua: TOKEN_BUCKET_LUA });
    redis.on('error', (error: unknown) => this.warnUnavailable(error));
    redis.on('ready', () => this.logger.log('burst limits kept in Redis'));
    this.redis = redis;
    await redis.connect().catch((error: unknown) => this.warnUnavailable(error));
  }

  async onApplicationShutdown(): Promise<void> {
    const redis = this.redis;
    this.redis = undefined;
    if (!redis) return;
    await redis.quit().catch(() => redis.disconnect());
  }

  /** Takes one token from the key's bucket. */
  take(keyId: string): Promise<BurstDecision> {
    return this.takeFrom(keyId, { ratePerSecond: this.config.burstRatePerSecond, capacity: this.config.burstCapacity });
  }

  /**
   * Takes one token from any named bucket with its own size and rate (the same script and
   * fallback): the account area's sign-in limits (`signin-email:…`, `signin-address:…`) and its
   * per-account burst limit.
   */
  async takeFrom(bucket: string, limit: BucketLimit): Promise<BurstDecision> {
    const redis = this.redis;
    if (redis) {
      try {
        const [allowed, remaining, retryMicros] = await redis.takeToken(
          `${this.config.redisKeyPrefix}burst:${bucket}`,
          limit.ratePerSecond,
          limit.capacity,
        );
        return { allowed: allowed === 1, remaining, retryAfterMs: Math.ceil(retryMicros / 1000) };
      } catch (error) {
        this.warnUnavailable(error);
      }
    }
    return this.localBuckets(limit).take(bucket);
  }

  private localBuckets(limit: BucketLimit): LocalTokenBuckets {
    if (limit.ratePerSecond === this.config.burstRatePerSecond && limit.capacity === this.config.burstCapacity) return this.local;
    const name = `${limit.ratePerSecond}/${limit.capacity}`;
    let buckets = this.otherLocal.get(name);
    if (!buckets) {
      buckets = new LocalTokenBuckets(limit.ratePerSecond, limit.capacity);
      this.otherLocal.set(name, buckets);
    }
    return buckets;
  }

  private warnUnavailable(error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = now;
    const reason = errorMessage(error);
    this.logger.warn(`Redis unavailable (${reason}): burst limits fall back to per-process buckets`);
  }
}
