import { Inject, Injectable } from '@nestjs/common';
import { firstRow, PG_POOL, Sql } from '@cars/persistence';
import { PlanId } from '../plans/plans';
import { NewApiKey } from './api-key';

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  prefix: string;
  createdAt: Date;
  revokedAt: Date | null;
}

/** A key as its owner sees it in the console: never the key, never its hash. */
export interface ApiKeyListing extends ApiKeyRecord {
  lastUsedAt: Date | null;
}

/** What authentication needs to know about the holder of a key. */
export interface KeyHolderRecord {
  keyId: string;
  accountId: string;
  plan: PlanId;
  planExpiresAt: Date | null;
  emailVerified: boolean;
}

const COLUMNS = `id, account_id AS "accountId", prefix, created_at AS "createdAt", revoked_at AS "revokedAt"`;

/**
 * SQL of the `api_keys` table, over a pg pool (`PG_POOL` when Nest provides it) or the client of
 * a transaction (`new ApiKeysRepository(tx)`). Only hashes are ever written.
 */
@Injectable()
export class ApiKeysRepository {
  constructor(@Inject(PG_POOL) private readonly sql: Sql) {}

  insert(accountId: string, key: NewApiKey): Promise<ApiKeyRecord | null> {
    return firstRow<ApiKeyRecord>(
      this.sql,
      `INSERT INTO api_keys (account_id, prefix, key_hash) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
      [accountId, key.prefix, key.keyHash],
    );
  }

  findByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    return firstRow<ApiKeyRecord>(this.sql, `SELECT ${COLUMNS} FROM api_keys WHERE key_hash = $1`, [keyHash]);
  }

  /** The holder of an unrevoked key (one indexed lookup: api_keys_key_hash_key). */
  findActiveHolder(keyHash: string): Promise<KeyHolderRecord | null> {
    return firstRow<KeyHolderRecord>(
      this.sql,
      `SELECT k.id AS "keyId", k.account_id AS "accountId", a.plan, a.plan_expires_at AS "planExpiresAt",
              a.email_verified AS "emailVerified"
         FROM api_keys k JOIN accounts a ON a.id = k.account_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
      [keyHash],
    );
  }

  /** Revokes by prefix; a key already revoked keeps its first revocation time. */
  revokeByPrefix(prefix: string): Promise<ApiKeyRecord | null> {
    return firstRow<ApiKeyRecord>(
      this.sql,
      `WITH u AS (
         UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE prefix = $1 RETURNING *
       ) SELECT ${COLUMNS} FROM u`,
      [prefix],
    );
  }

  /** The account's keys, newest first, revoked ones included. */
  async listByAccount(accountId: string): Promise<ApiKeyListing[]> {
    const result = await this.sql.query(
      `SELECT ${COLUMNS}, last_used_at AS "lastUsedAt" FROM api_keys WHERE account_id = $1 ORDER BY created_at DESC, id DESC`,
      [accountId],
    );
    return result.rows as ApiKeyListing[];
  }

  /** How many unrevoked keys the account has. */
  async countActive(accountId: string): Promise<number> {
    const row = await firstRow<{ n: number }>(this.sql, `SELECT count(*)::int AS n FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL`, [accountId]);
    return row?.n ?? 0;
  }

  /** One key of the account, or null (another account's key reads as unknown). */
  findOfAccount(accountId: string, keyId: string): Promise<ApiKeyListing | null> {
    return firstRow<ApiKeyListing>(
      this.sql,
      `SELECT ${COLUMNS}, last_used_at AS "lastUsedAt" FROM api_keys WHERE account_id = $1 AND id = $2`,
      [accountId, keyId],
    );
  }

  /** Revokes one key of the account by id; a key already revoked keeps its first revocation time. */
  revokeOfAccount(accountId: string, keyId: string): Promise<ApiKeyRecord | null> {
    return firstRow<ApiKeyRecord>(
      this.sql,
      `WITH u AS (
         UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE account_id = $1 AND id = $2 RETURNING *
       ) SELECT ${COLUMNS} FROM u`,
      [accountId, keyId],
    );
  }

  async touchLastUsed(keyId: string): Promise<void> {
    await this.sql.query(`WITH u AS (UPDATE api_keys SET last_used_at = now() WHERE id = $1 RETURNING 1) SELECT 1 FROM u`, [
      keyId,
    ]);
  }
}
