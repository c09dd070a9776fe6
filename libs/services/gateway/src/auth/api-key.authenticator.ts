import { Inject, Injectable, Logger } from '@nestjs/common';
import { apiKeysRepository, hashApiKey, isWellFormedApiKey } from '@cars/accounts';
import { DataSource } from 'typeorm';
import { API_ACCESS_CONFIG, ApiAccessConfig } from '../metering/api-access.config';
import { ApiPrincipal } from './principal';
import { TtlCache } from './ttl-cache';

/** Unknown keys are remembered for at most this long (a flood of bad keys costs one query each per window). */
const NEGATIVE_TTL_MS = 5000;
const MAX_ENTRIES = 20000;

/**
 * API key → principal, without a database round trip per request: results are cached in
 * process for API_KEY_CACHE_TTL_MS (≤ 30 s, default 10 s), keyed by the key's SHA-256 hash,
 * so a revocation or plan change reaches every gateway within that time. Concurrent misses for
 * the same key share one query.
 */
@Injectable()
export class ApiKeyAuthenticator {
  private readonly logger = new Logger('ApiKeys');
  private readonly cache = new TtlCache<ApiPrincipal | null>(MAX_ENTRIES);
  private readonly loading = new Map<string, Promise<ApiPrincipal | null>>();

  constructor(
    private readonly db: DataSource,
    @Inject(API_ACCESS_CONFIG) private readonly config: ApiAccessConfig,
  ) {}

  /** The principal of an active key, or null for anything else. */
  async authenticate(apiKey: string): Promise<ApiPrincipal | null> {
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

  /** Forget everything (tests; a future revocation broadcast would call it per key). */
  clear(): void {
    this.cache.clear();
  }

  private async load(keyHash: string): Promise<ApiPrincipal | null> {
    const holder = await apiKeysRepository.findActiveHolder(this.db, keyHash);
    const ttl = this.config.keyCacheTtlMs;
    this.cache.set(keyHash, holder, holder ? ttl : Math.min(ttl, NEGATIVE_TTL_MS));
    if (holder) {
      // At most once per key, gateway and cache window: a hint for operators, not an audit trail.
      apiKeysRepository.touchLastUsed(this.db, holder.keyId).catch((error: unknown) => {
        this.logger.warn(`could not record last use of key ${holder.keyId}: ${String(error)}`);
      });
    }
    return holder;
  }
}
