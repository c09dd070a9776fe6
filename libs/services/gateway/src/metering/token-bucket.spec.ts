import { LocalTokenBuckets } from './token-bucket';

describe('LocalTokenBuckets', () => {
  it('allows a burst of `capacity`, then refuses with the time until the next token', () => {
    const buckets = new LocalTokenBuckets(10, 20);
    const decisions = Array.from({ length: 25 }, () => buckets.take('k', 1000));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(20);
    expect(decisions[19]).toEqual({ allowed: true, remaining: 0, retryAfterMs: 0 });
    expect(decisions[20]).toEqual({ allowed: false, remaining: 0, retryAfterMs: 100 });
  });

  it('refills at the rate, up to the capacity', () => {
    const buckets = new LocalTokenBuckets(10, 20);
    for (let i = 0; i < 20; i += 1) buckets.take('k', 0);
    expect(buckets.take('k', 0).allowed).toBe(false);
    expect(buckets.take('k', 250)).toMatchObject({ allowed: true, remaining: 1 });
    expect(buckets.take('k', 100000)).toMatchObject({ allowed: true, remaining: 19 });
  });

  it('keeps one bucket per key', () => {
    const buckets = new LocalTokenBuckets(1, 1);
    expect(buckets.take('a', 0).allowed).toBe(true);
    expect(buckets.take('a', 0).allowed).toBe(false);
    expect(buckets.take('b', 0).allowed).toBe(true);
  });
});
