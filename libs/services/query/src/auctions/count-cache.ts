/**
 * Exact totals of GET /auctions, keyed by normalized filters and stamped with the data version
 * (migration QueryIndexes: bumped in the same transaction as any change that can alter a count).
 * An entry answers only for the version it was counted at, so a total is never stale: a new
 * version simply misses. Concurrent misses of one key share one count query. LRU-bounded.
 */
export class CountCache {
  private readonly entries = new Map<string, { version: string; total: number }>();
  private readonly inflight = new Map<string, Promise<number>>();
  private hits = 0;
  private misses = 0;

  constructor(private readonly maxEntries = 10_000) {}

  get(key: string, version: string): number | undefined {
    const entry = this.entries.get(key);
    if (!entry || entry.version !== version) return undefined;
    // Refresh recency.
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.hits += 1;
    return entry.total;
  }

  set(key: string, version: string, total: number): void {
    const current = this.entries.get(key);
    // An older count finishing late never replaces a newer one.
    if (current && BigInt(current.version) > BigInt(version)) return;
    this.entries.delete(key);
    this.entries.set(key, { version, total });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  /**
   * The cached total, or `count()` run once for all concurrent callers. `version` must have been
   * read before `count` starts (then the total is at least as new as the version it is stored
   * under, and any later change bumps the version).
   */
  async getOrCount(key: string, version: string, count: () => Promise<number>): Promise<number> {
    const cached = this.get(key, version);
    if (cached !== undefined) return cached;
    const flightKey = `${version}\n${key}`;
    const running = this.inflight.get(flightKey);
    if (running) return running;
    this.misses += 1;
    const started = count().then(
      (total) => {
        this.inflight.delete(flightKey);
        this.set(key, version, total);
        return total;
      },
      (error: unknown) => {
        this.inflight.delete(flightKey);
        throw error;
      },
    );
    this.inflight.set(flightKey, started);
    return started;
  }

  stats(): { entries: number; hits: number; misses: number } {
    return { entries: this.entries.size, hits: this.hits, misses: this.misses };
  }
}
