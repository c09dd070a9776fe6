import { TtlCache } from './ttl-cache';

/** A clock the test moves by hand; it starts well away from 0, which lru-cache reads as "no time". */
function manualClock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

describe('TtlCache', () => {
  it('returns values until they expire, then drops them', () => {
    const clock = manualClock();
    const cache = new TtlCache<string>(10, clock.now);
    cache.set('a', 'A', 1000);
    clock.advance(1000);
    expect(cache.get('a')).toBe('A');
    clock.advance(1);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('does not extend the life of an entry that is read', () => {
    const clock = manualClock();
    const cache = new TtlCache<string>(10, clock.now);
    cache.set('a', 'A', 100);
    clock.advance(80);
    expect(cache.get('a')).toBe('A');
    clock.advance(80);
    expect(cache.get('a')).toBeUndefined();
  });

  it('restarts the TTL when a key is set again', () => {
    const clock = manualClock();
    const cache = new TtlCache<string>(10, clock.now);
    cache.set('a', 'A', 100);
    clock.advance(80);
    cache.set('a', 'B', 100);
    clock.advance(80);
    expect(cache.get('a')).toBe('B');
  });

  it('evicts the least recently used entry beyond its size', () => {
    const clock = manualClock();
    const cache = new TtlCache<number>(2, clock.now);
    cache.set('a', 1, 1000);
    cache.set('b', 2, 1000);
    clock.advance(1);
    expect(cache.get('a')).toBe(1);
    cache.set('c', 3, 1000);
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
  });

  it('keeps null values (negative caching) and ignores a zero or negative TTL', () => {
    const clock = manualClock();
    const cache = new TtlCache<string | null>(2, clock.now);
    cache.set('x', null, 10);
    clock.advance(5);
    expect(cache.get('x')).toBeNull();
    cache.set('y', 'Y', 0);
    cache.set('z', 'Z', -1);
    expect(cache.get('y')).toBeUndefined();
    expect(cache.get('z')).toBeUndefined();
    expect(cache.size).toBe(1);
    clock.advance(6);
    expect(cache.get('x')).toBeUndefined();
  });

  it('deletes one key, the keys whose value matches, or everything', () => {
    const cache = new TtlCache<{ account: string } | null>(10);
    cache.set('k1', { account: 'a' }, 60_000);
    cache.set('k2', { account: 'b' }, 60_000);
    cache.set('k3', { account: 'a' }, 60_000);
    cache.set('k4', null, 60_000);
    cache.set('k5', { account: 'c' }, 60_000);

    cache.deleteWhere((holder) => holder?.account === 'a');
    expect(cache.get('k1')).toBeUndefined();
    expect(cache.get('k3')).toBeUndefined();
    expect(cache.get('k2')).toEqual({ account: 'b' });
    expect(cache.get('k4')).toBeNull();
    expect(cache.size).toBe(3);

    cache.delete('k4');
    expect(cache.get('k4')).toBeUndefined();
    expect(cache.size).toBe(2);

    cache.clear();
    expect(cache.size).toBe(0);
    expect(cache.get('k5')).toBeUndefined();
  });

  it('expires entries on the default clock', async () => {
    const cache = new TtlCache<string>(10);
    cache.set('a', 'A', 1);
    expect(cache.get('a')).toBe('A');
    const deadline = Date.now() + 1000;
    while (cache.get('a') !== undefined && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
    expect(cache.get('a')).toBeUndefined();
  });
});
