import { Inject, Injectable } from '@nestjs/common';
import { firstRow, PG_POOL, Sql } from '@cars/persistence';

export type VerificationTokenState = 'valid' | 'used' | 'expired';

export interface VerificationTokenRecord {
  accountId: string;
  /** The address the link was sent to: a token verifies that address only. */
  email: string;
  expiresAt: Date;
  usedAt: Date | null;
}

/**
 * SQL of `email_verification_tokens`: single-use, expiring tokens of the links that verify an
 * account's email address. The table holds SHA-256 hashes of the tokens, never the tokens.
 */
@Injectable()
export class EmailVerificationsRepository {
  constructor(@Inject(PG_POOL) private readonly sql: Sql) {}

  async insert(token: { accountId: string; email: string; tokenHash: string; now: Date; ttlMs: number }): Promise<Date> {
    const expiresAt = new Date(token.now.getTime() + token.ttlMs);
    await this.sql.query(
      `INSERT INTO email_verification_tokens (token_hash, account_id, email, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
      [token.tokenHash, token.accountId, token.email, token.now, expiresAt],
    );
    return expiresAt;
  }

  /** The token's row, locked for the verification (one transaction uses it once). */
  find(tokenHash: string, options: { lock?: boolean } = {}): Promise<VerificationTokenRecord | null> {
    return firstRow<VerificationTokenRecord>(
      this.sql,
      `SELECT account_id AS "accountId", email, expires_at AS "expiresAt", used_at AS "usedAt"
         FROM email_verification_tokens WHERE token_hash = $1${options.lock ? ' FOR UPDATE' : ''}`,
      [tokenHash],
    );
  }

  async markUsed(tokenHash: string, now: Date): Promise<void> {
    await this.sql.query(`UPDATE email_verification_tokens SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL`, [tokenHash, now]);
  }
}

/** Which of the three a token is at `now`. */
export function verificationTokenState(token: VerificationTokenRecord, now: Date): VerificationTokenState {
  if (token.usedAt !== null) return 'used';
  if (token.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'valid';
}
