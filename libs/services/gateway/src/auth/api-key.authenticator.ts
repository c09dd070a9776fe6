import { Inject, Injectable, Logger } from '@nestjs/common';
import { ApiKeysRepository, hashApiKey, isWellFormedApiKey, KeyHolderRecord } from '@cars/accounts';
import { API_ACCESS_CONFIG, ApiAccessConfig } from '../metering/api-access.config';
import { TtlCache } from './ttl-cache';

/** Unknown keys are remembered for at most this long (a flood of bad keys costs one query each per window). */
const NEGATIVE_TTL_MS = 5000;
const MAX_ENTRIES = 20000;

/**
 * API key → principal, without a database round trip per request: results are cached in
 * process, keyed by the key's SHA-256 hash. A change of an account or key is broadcast by the
 * database (`AccountChangeListener`) and evicts the entries at once on every gateway;
 * API_KEY_CACHE_TTL_MS (≤ 30 s, default 10 s) is only the backstop for a lost broadcast.
 * Concurrent misses for the same key share one query.
 */
@Injectable()
export class ApiKeyAuthenticator {
  private readonly logger = new Logger('ApiKeys');
  private readonly cache = new TtlCache<KeyHolderRecord | null>(MAX_ENTRIES);
  private readonly loading = new Map<string, Promise<KeyHolderRecord | null>>();
  /** Bumped by every eviction: a read that began before it does not refill the cache. */
  private generation = 0;

  constructor(
    private readonly keys: ApiKeysRepository,
    @Inject(API_ACCESS_CONFIG) private readonly config: ApiAccessConfig,
  ) {}

  /**
   * The principal of an active key, or null for anything else: at once (no promise) when the
   * cache holds the answer — nearly every request — else once the database has answered.
   */
  authenticate(apiKey: string): KeyHolderRecord | null | Promise<KeyHolderRecord | null> {
    if (!isWellFormedApiKey(apiKey)) return null;
    const keyHash = hashApiKey(apiKey);
    const cached = this.cache.get(keyHash);
    if (cached !== undefined) return cached;
    let pending = this.loading.get(keyHash);
    if (!pending) {
      pending = this.load(keyHash).finally(() => this.loading.delete(keyHash));
      this.loading.set(keyHash, pending);
    }
    return pending;
  }

  /** Forget everything: after the broadcast connection was lost, changes may have been missed. */
  clear(): void {
    this.cache.clear();
    this.generation += 1;
  }

  /** Forget one account's keys (its plan, email or expiry changed). */
  forgetAccount(accountId: string): void {
    this.cache.deleteWhere((holder) => holder?.accountId === accountId);
    this.generation += 1;
  }

  /** Forget one key (created, revoked or deleted): also an unknown key remembered as such. */
  forgetKey(keyHash: string): void {
    this.cache.delete(keyHash);
    this.generation += 1;
  }

  private async load(keyHash: string): Promise<KeyHolderRecord | null> {
    const generation = this.generation;
    const holder = await this.keys.findActiveHolder(keyHash);
    const ttl = this.config.keyCacheTtlMs;
    if (generation === this.generation) this.cache.set(keyHash, holder, holder ? ttl : Math.min(ttl, NEGATIVE_TTL_MS));
    if (holder) {
      // At most once per key, gateway and cache window: a hint for operators, not an audit trail.
      this.keys.touchLastUsed(holder.keyId).catch((error: unknown) => {
        this.logger.warn(`could not record last use of key ${holder.keyId}: ${String(error)}`);
      });
    }
    return holder;
  }
}
