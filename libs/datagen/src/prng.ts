/**
 * Seeded pseudo-random numbers (sfc32, seeded from a string with cyrb128). Math.random is never
 * used, so the same seed always gives the same sequence on every platform.
 */

/** 128-bit string hash (cyrb128) → four 32-bit words, used to seed sfc32. */
export function hashString128(text: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

/** A 32-bit bijective integer mix (each step is invertible), for stateless hashing of indices. */
export function mix32(value: number): number {
  let x = value >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  x ^= x >>> 16;
  return x >>> 0;
}

/** A stable hash of a few integers to [0, 1). */
export function hashUnit(a: number, b = 0, c = 0): number {
  return mix32(mix32(mix32(a) ^ Math.imul(b, 0x9e3779b1)) ^ Math.imul(c + 0x632be5ab, 0x85ebca6b)) / 4294967296;
}

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spareNormal: number | null = null;

  constructor(seed: string) {
    [this.a, this.b, this.c, this.d] = hashString128(seed);
    for (let i = 0; i < 15; i++) this.nextUint32();
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [min, max] (inclusive). */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** Uniform float in [min, max). */
  range(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)];
  }

  /** Standard normal (Box–Muller, caching the second value). */
  normal(): number {
    if (this.spareNormal !== null) {
      const v = this.spareNormal;
      this.spareNormal = null;
      return v;
    }
    let u = 0;
    while (u === 0) u = this.next();
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spareNormal = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }

  /** Exponential with the given mean. */
  exponential(mean: number): number {
    let u = 0;
    while (u === 0) u = this.next();
    return -Math.log(u) * mean;
  }
}

/** Cumulative weights for fast weighted picks by binary search. */
export class WeightedTable<T> {
  readonly items: readonly T[];
  private readonly cumulative: Float64Array;
  readonly total: number;

  constructor(items: readonly T[], weight: (item: T, index: number) => number) {
    const kept: T[] = [];
    const cum: number[] = [];
    let total = 0;
    items.forEach((item, i) => {
      const w = weight(item, i);
      if (w > 0) {
        total += w;
        kept.push(item);
        cum.push(total);
      }
    });
    this.items = kept;
    this.cumulative = Float64Array.from(cum);
    this.total = total;
  }

  get size(): number {
    return this.items.length;
  }

  /** The item at cumulative position `u * total` for `u` in [0, 1). */
  at(u: number): T {
    const target = u * this.total;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cumulative[mid] > target) hi = mid;
      else lo = mid + 1;
    }
    return this.items[lo];
  }

  pick(rng: Rng): T {
    return this.at(rng.next());
  }
}
