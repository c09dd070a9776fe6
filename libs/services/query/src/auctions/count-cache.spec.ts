import { CountCache } from './count-cache';

describe('CountCache', () => {
  it('answers only for the data version a total was counted at', async () => {
    const cache = new CountCache();
    const count = jest.fn().mockResolvedValueOnce(10).mockResolvedValueOnce(11);
    expect(await cache.getOrCount('k', '1', count)).toBe(10);
    expect(await cache.getOrCount('k', '1', count)).toBe(10);
    expect(count).toHaveBeenCalledTimes(1);
    expect(await cache.getOrCount('k', '2', count)).toBe(11);
    expect(count).toHaveBeenCalledTimes(2);
    expect(cache.get('k', '1')).toBeUndefined();
  });

  it('runs one count for concurrent misses of a key', async () => {
    const cache = new CountCache();
    let resolve!: (n: number) => void;
    const count = jest.fn(() => new Promise<number>((r) => (resolve = r)));
    const all = Promise.all([cache.getOrCount('k', '1', count), cache.getOrCount('k', '1', count)]);
    resolve(7);
    expect(await all).toEqual([7, 7]);
    expect(count).toHaveBeenCalledTimes(1);
  });

  it('does not cache failures', async () => {
    const cache = new CountCache();
    await expect(cache.getOrCount('k', '1', () => Promise.reject(new Error('db down')))).rejects.toThrow('db down');
    expect(await cache.getOrCount('k', '1', () => Promise.resolve(3))).toBe(3);
  });

  it('never lets an older count replace a newer one', () => {
    const cache = new CountCache();
    cache.set('k', '5', 50);
    cache.set('k', '4', 40);
    expect(cache.get('k', '5')).toBe(50);
  });

  it('evicts the least recently used entries', () => {
    const cache = new CountCache(2);
    cache.set('a', '1', 1);
    cache.set('b', '1', 2);
    cache.get('a', '1');
    cache.set('c', '1', 3);
    expect(cache.get('b', '1')).toBeUndefined();
    expect(cache.get('a', '1')).toBe(1);
    expect(cache.get('c', '1')).toBe(3);
  });
});
