/**
 * Token bucket per API key: a bucket holds at most `capacity` tokens and refills at
 * `ratePerSecond`; each request takes one token or is refused with the time until one is back.
 */
export interface BurstDecision {
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** When refused: milliseconds until a token is available. */
  retryAfterMs: number;
}

/**
 * The Redis script: atomic per bucket, so every gateway replica shares one bucket per key.
 * Time comes from the Redis server (TIME), not from the replicas, whose clocks may differ.
 * State: hash {tokens, ts(µs)}; expires once the bucket would be full again anyway.
 * KEYS[1] bucket; ARGV[1] rate per second; ARGV[2] capacity; ARGV[3] tokens wanted (≥ 1); ARGV[4]
 * tokens given back (unspent ones of an earlier block, capped at the capacity like any refill).
 * Beyond the first token, a block is taken only from the bucket's upper half, so near empty every
 * call takes one token and replicas share the last tokens exactly as with one token per request.
 * ARGV[5] = '1' asks for a block ahead of need: only from the upper half, and no first token
 * (0 taken is then not a refusal, just nothing to spare).
 * Returns {tokens taken (0 = refused), whole tokens left in the bucket, retry µs when refused}.
 */
export const TOKEN_BUCKET_LUA = `
local rate = tonumber(ARGV[1])
local capacity = tonumber(ARGV[2])
local want = tonumber(ARGV[3]) or 1
local back = tonumber(ARGV[4]) or 0
local ahead = ARGV[5] == '1'
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil or ts == nil then
  tokens = capacity
  ts = now
end
if now > ts then
  tokens = math.min(capacity, tokens + (now - ts) * rate / 1000000)
end
tokens = math.min(capacity, tokens + back)
local taken = 0
local retry = 0
if tokens >= 1 then
  local block = math.min(want, math.floor(tokens - capacity / 2))
  if ahead then taken = math.max(0, block) else taken = math.max(1, block) end
  tokens = tokens - taken
else
  retry = math.ceil((1 - tokens) * 1000000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts', math.max(now, ts))
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate * 1000) + 1000)
return { taken, math.floor(tokens), retry }
`;

/**
 * The same bucket in process memory: the limiter of a gateway without Redis (quick start), and
 * its fallback while Redis is unreachable.
 */
export class LocalTokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; ts: number }>();

  constructor(
    private readonly ratePerSecond: number,
    private readonly capacity: number,
    private readonly maxBuckets = 50000,
  ) {}

  take(key: string, nowMs = performance.timeOrigin + performance.now()): BurstDecision {
    const bucket = this.buckets.get(key) ?? { tokens: this.capacity, ts: nowMs };
    if (nowMs > bucket.ts) {
      bucket.tokens = Math.min(this.capacity, bucket.tokens + ((nowMs - bucket.ts) * this.ratePerSecond) / 1000);
      bucket.ts = nowMs;
    }
    let decision: BurstDecision;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      decision = { allowed: true, remaining: Math.floor(bucket.tokens), retryAfterMs: 0 };
    } else {
      decision = { allowed: false, remaining: 0, retryAfterMs: Math.ceil(((1 - bucket.tokens) * 1000) / this.ratePerSecond) };
    }
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.maxBuckets) this.buckets.delete(this.buckets.keys().next().value as string);
    return decision;
  }
}
