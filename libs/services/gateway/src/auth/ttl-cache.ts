import { LRUCache } from 'lru-cache';

/** Milliseconds on a monotonic scale; only differences between two readings matter. */
export type MonotonicClock = () => number;

/**
 * A small LRU map whose entries expire: what a gateway remembers about API keys. Values may be
 * null (an unknown key remembered as such), which lru-cache cannot hold, so each value travels
 * in a box. An entry is live for `ttlMs` after it was set, the last millisecond included; an
 * expired entry is dropped when it is next read.
 */
export class TtlCache<V> {
  private readonly entries: LRUCache<string, { readonly value: V }>;

  /** `now` defaults to lru-cache's clock (`performance.now()`); a reading of 0 means "no time" to it. */
  constructor(maxEntries: number, now?: MonotonicClock) {
    this.entries = new LRUCache<string, { readonly value: V }>({
      max: maxEntries,
      // Read the clock on every check rather than reusing a reading for a millisecond: exact
      // with an injected clock, and no timer per read.
      ttlResolution: 0,
      ...(now ? { perf: { now } } : {}),
    });
  }

  /** The live value, or undefined when absent or expired. A hit makes the entry the most recently used. */
  get(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** Stores the value for `ttlMs`; a TTL of zero or less stores nothing. */
  set(key: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.entries.set(key, { value }, { ttl: ttlMs });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Removes every entry whose value matches (a scan: for rare events such as a plan change). */
  deleteWhere(matches: (value: V) => boolean): void {
    const doomed: string[] = [];
    for (const [key, box] of this.entries.entries()) if (matches(box.value)) doomed.push(key);
    for (const key of doomed) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Entries held, including expired ones not read since they expired. */
  get size(): number {
    return this.entries.size;
  }
}
