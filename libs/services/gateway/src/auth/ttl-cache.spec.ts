import { TtlCache } from './ttl-cache';

describe('TtlCache', () => {
  it('returns values until they expire', () => {
    const cache = new TtlCache<string>(10);
    cache.set('a', 'A', 1000, 0);
    expect(cache.get('a', 999)).toBe('A');
    expect(cache.get('a', 1000)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('evicts the least recently used entry beyond its size', () => {
    const cache = new TtlCache<number>(2);
    cache.set('a', 1, 1000, 0);
    cache.set('b', 2, 1000, 0);
    expect(cache.get('a', 1)).toBe(1);
    cache.set('c', 3, 1000, 1);
    expect(cache.get('b', 2)).toBeUndefined();
    expect(cache.get('a', 2)).toBe(1);
    expect(cache.get('c', 2)).toBe(3);
  });

  it('keeps null values (negative caching) and ignores a zero TTL', () => {
    const cache = new TtlCache<string | null>(2);
    cache.set('x', null, 10, 0);
    expect(cache.get('x', 5)).toBeNull();
    cache.set('y', 'Y', 0, 0);
    expect(cache.get('y', 0)).toBeUndefined();
  });
});
