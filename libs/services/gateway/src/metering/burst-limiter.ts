import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import Redis from 'ioredis';
import { API_ACCESS_CONFIG, ApiAccessConfig } from './api-access.config';
import { BurstDecision, LocalTokenBuckets, TOKEN_BUCKET_LUA } from './token-bucket';
import { errorMessage } from '@cars/contracts';

interface BucketRedis extends Redis {
  takeToken(key: string, ratePerSecond: number, capacity: number, want: number, giveBack: number, ahead?: 1): Promise<[number, number, number]>;
}

/**
 * Tokens this gateway took from a key's shared bucket beyond the one its request needed, spent
 * by the key's next requests here without a round trip; unspent ones go back with the key's next
 * call to Redis once they expire.
 */
interface HeldTokens {
  tokens: number;
  /** Whole tokens the shared bucket held after the grant. */
  left: number;
  grantedAt: number;
  /** How many the grant asked for: a key that spends its block in time asks for twice as many next. */
  asked: number;
  /** A call for the next block is on its way (taken ahead, while half of this one is left). */
  refilling?: boolean;
}

/**
 * How long held tokens may be spent here. Held tokens already left the shared bucket, so how
 * long they are held changes no decision of another replica (MAX_BLOCK bounds that); it only
 * delays when unspent ones go back.
 */
const HELD_TOKENS_MS = 1000;
/** The most tokens one call takes (the script takes more than one only from the bucket's upper half). */
const MAX_BLOCK = 32;
/** Keys whose held tokens are remembered, oldest forgotten first. */
const MAX_HELD_KEYS = 50000;

/** A bucket's size and refill rate. */
export interface BucketLimit {
  ratePerSecond: number;
  capacity: number;
}

/** How often the "Redis is unavailable" warning may repeat. */
const WARN_EVERY_MS = 30000;

/**
 * The burst limit of every authenticated route: one token bucket per API key, kept in Redis so
 * all gateway replicas share it (one atomic Lua script per request — or, for a key busy on this
 * gateway, per block of up to MAX_BLOCK tokens taken from the bucket's upper half and spent here
 * within HELD_TOKENS_MS; unspent ones go back at the key's next call. The next block is taken
 * once half of one is spent (`takeAhead`). At most MAX_BLOCK / 2 + MAX_BLOCK tokens of a key
 * are held per gateway, and only while the bucket is more than half full, so near the limit
 * every request asks Redis and replicas share the last tokens exactly).
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
  private readonly held = new Map<string, HeldTokens>();
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

  /**
   * Takes one token from the key's bucket: at once (no promise) when this gateway holds one of
   * the key's tokens, else from Redis.
   */
  take(keyId: string): BurstDecision | Promise<BurstDecision> {
    const limit = { ratePerSecond: this.config.burstRatePerSecond, capacity: this.config.burstCapacity };
    return this.takeHeld(keyId, limit) ?? this.takeFrom(keyId, limit);
  }

  /**
   * A token of the bucket's block held here and still fresh, or undefined. Once half of the block
   * is spent, the next block is asked for in the background, so a busy key's requests keep
   * finding a token here instead of waiting for Redis at the end of every block.
   */
  private takeHeld(bucket: string, limit: BucketLimit): BurstDecision | undefined {
    if (!this.redis) return undefined;
    const held = this.held.get(bucket);
    const now = Date.now();
    if (!held || held.tokens <= 0 || now - held.grantedAt >= HELD_TOKENS_MS) return undefined;
    held.tokens -= 1;
    // Half the block spent within half its hold time: the key is busy here.
    if (held.tokens * 2 <= held.asked && !held.refilling && now - held.grantedAt < HELD_TOKENS_MS / 2) this.takeAhead(bucket, limit, held);
    return { allowed: true, remaining: held.left + held.tokens, retryAfterMs: 0 };
  }

  /**
   * The next block, taken while `held` still has tokens: twice as large, and only from the
   * bucket's upper half (none when it is below: near the limit, tokens are never taken ahead of a
   * request, and replicas keep sharing the last ones exactly). Whatever the answer, the held
   * tokens are spent, and the request that finds none asks Redis itself.
   */
  private takeAhead(bucket: string, limit: BucketLimit, held: HeldTokens): void {
    const redis = this.redis;
    if (!redis) return;
    held.refilling = true;
    const want = Math.min(held.asked * 2, MAX_BLOCK);
    redis
      .takeToken(`${this.config.redisKeyPrefix}burst:${bucket}`, limit.ratePerSecond, limit.capacity, want, 0, 1)
      .then(
        ([taken, left]) => {
          if (taken >= 1) this.hold(bucket, { tokens: taken, left, grantedAt: Date.now(), asked: want });
        },
        (error: unknown) => this.warnUnavailable(error),
      )
      .finally(() => {
        held.refilling = false;
      });
  }

  /**
   * Takes one token from any named bucket with its own size and rate (the same script and
   * fallback): the account area's sign-in limits (`signin-email:…`, `signin-address:…`) and its
   * per-account burst limit.
   */
  async takeFrom(bucket: string, limit: BucketLimit): Promise<BurstDecision> {
    const redis = this.redis;
    if (redis) {
      const fromBlock = this.takeHeld(bucket, limit);
      if (fromBlock) return fromBlock;
      const now = Date.now();
      const held = this.held.get(bucket);
      const fresh = held !== undefined && now - held.grantedAt < HELD_TOKENS_MS;
      // A key whose block was spent before it expired asks for twice as many; one whose block
      // expired unspent within another hold's time, for half as many; any other key, for one.
      const want = !held
        ? 1
        : fresh
          ? Math.min(held.asked * 2, MAX_BLOCK)
          : now - held.grantedAt < 2 * HELD_TOKENS_MS
            ? Math.max(1, held.asked >> 1)
            : 1;
      const giveBack = held && !fresh ? held.tokens : 0;
      this.held.delete(bucket);
      try {
        const [taken, left, retryMicros] = await redis.takeToken(
          `${this.config.redisKeyPrefix}burst:${bucket}`,
          limit.ratePerSecond,
          limit.capacity,
          want,
          giveBack,
        );
        if (taken < 1) return { allowed: false, remaining: left, retryAfterMs: Math.ceil(retryMicros / 1000) };
        this.hold(bucket, { tokens: taken - 1, left, grantedAt: Date.now(), asked: want });
        return { allowed: true, remaining: left + taken - 1, retryAfterMs: 0 };
      } catch (error) {
        this.warnUnavailable(error);
      }
    }
    return this.localBuckets(limit).take(bucket);
  }

  /** Keeps a grant's extra tokens; a concurrent grant's still-fresh ones are kept with them. */
  private hold(bucket: string, grant: HeldTokens): void {
    const earlier = this.held.get(bucket);
    if (earlier && grant.grantedAt - earlier.grantedAt < HELD_TOKENS_MS) grant.tokens += earlier.tokens;
    this.held.delete(bucket);
    this.held.set(bucket, grant);
    if (this.held.size > MAX_HELD_KEYS) this.held.delete(this.held.keys().next().value as string);
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
