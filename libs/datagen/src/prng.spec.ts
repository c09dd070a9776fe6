import { Rng, WeightedTable, hashString128, hashUnit, mix32 } from './prng';

describe('prng', () => {
  it('repeats a sequence for the same seed and differs for another', () => {
    const a = new Rng('seed');
    const b = new Rng('seed');
    const c = new Rng('seed2');
    const sa = Array.from({ length: 100 }, () => a.nextUint32());
    const sb = Array.from({ length: 100 }, () => b.nextUint32());
    const sc = Array.from({ length: 100 }, () => c.nextUint32());
    expect(sa).toEqual(sb);
    expect(sa).not.toEqual(sc);
    expect(hashString128('x')).toEqual(hashString128('x'));
  });

  it('produces roughly uniform and normal values', () => {
    const rng = new Rng('stats');
    let sum = 0;
    let sumSq = 0;
    const n = 50000;
    let outside = 0;
    for (let i = 0; i < n; i++) {
      const u = rng.next();
      if (u < 0 || u >= 1) outside++;
      const z = rng.normal();
      sum += z;
      sumSq += z * z;
    }
    expect(outside).toBe(0);
    expect(Math.abs(sum / n)).toBeLessThan(0.03);
    expect(Math.abs(sumSq / n - 1)).toBeLessThan(0.03);
    for (let i = 0; i < 1000; i++) {
      const k = rng.int(3, 7);
      expect(k).toBeGreaterThanOrEqual(3);
      expect(k).toBeLessThanOrEqual(7);
    }
  });

  it('mixes integers bijectively and hashes to [0, 1)', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 100000; i++) seen.add(mix32(i));
    expect(seen.size).toBe(100000);
    for (let i = 0; i < 1000; i++) {
      const u = hashUnit(i, 2, 3);
      expect(u).toBeGreaterThanOrEqual(0);
      expect(u).toBeLessThan(1);
    }
  });

  it('picks by weight, skipping zero weights', () => {
    const table = new WeightedTable(['a', 'b', 'c'], (x) => (x === 'a' ? 1 : x === 'b' ? 3 : 0));
    expect(table.size).toBe(2);
    const rng = new Rng('w');
    const counts: Record<string, number> = { a: 0, b: 0, c: 0 };
    for (let i = 0; i < 40000; i++) counts[table.pick(rng)]++;
    expect(counts.c).toBe(0);
    expect(counts.b / counts.a).toBeGreaterThan(2.7);
    expect(counts.b / counts.a).toBeLessThan(3.3);
    expect(table.at(0)).toBe('a');
    expect(table.at(0.9999)).toBe('b');
  });
});
