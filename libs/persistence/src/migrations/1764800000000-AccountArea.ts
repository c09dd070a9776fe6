import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The account area (console): passwords, server-side sessions, email verification tokens, and the
 * ledger's split of usage by kind.
 * - `account_credentials`: one scrypt hash per account that signs in (parameters and salt inside
 *   the string; operator-made accounts have none).
 * - `account_sessions`: the cookie's opaque token is stored as its SHA-256 hash; a session ends at
 *   its idle or absolute expiry, or when deleted (sign-out, password change).
 * - `email_verification_tokens`: single-use, expiring; SHA-256 hashes only.
 * - `usage_ledger.requests`: units of `used` committed as API requests by a gateway, so the
 *   console can show requests vs deliveries. Existing rows get the best evidence there is: `used`
 *   minus the successful deliveries of real events recorded in that period.
 */
export class AccountArea1764800000000 implements MigrationInterface {
  name = 'AccountArea1764800000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE account_credentials (
        account_id uuid PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
        password_hash text NOT NULL,
        password_changed_at timestamptz NOT NULL DEFAULT now(),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE account_sessions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        token_hash text NOT NULL,
        csrf_token text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        idle_expires_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        CONSTRAINT account_sessions_token_hash_key UNIQUE (token_hash)
      )`);
    await q.query(`CREATE INDEX account_sessions_account_idx ON account_sessions (account_id)`);
    await q.query(`CREATE INDEX account_sessions_expires_idx ON account_sessions (expires_at)`);
    await q.query(`
      CREATE TABLE email_verification_tokens (
        token_hash text PRIMARY KEY,
        account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        email text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      )`);
    await q.query(`CREATE INDEX email_verification_tokens_account_idx ON email_verification_tokens (account_id, created_at DESC)`);
    await q.query(`ALTER TABLE usage_ledger ADD COLUMN requests integer NOT NULL DEFAULT 0`);
    await q.query(`
      UPDATE usage_ledger l
         SET requests = greatest(0, l.used - (
           SELECT count(*) FROM webhook_deliveries d
            WHERE d.account_id = l.account_id AND d.status = 'succeeded' AND d.event_type <> 'webhook.test'
              AND d.updated_at >= l.period AND d.updated_at < l.period + interval '1 month'))
       WHERE l.used > 0`);
    await q.query(`ALTER TABLE usage_ledger ADD CONSTRAINT usage_ledger_requests_check CHECK (requests >= 0)`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE usage_ledger DROP CONSTRAINT IF EXISTS usage_ledger_requests_check`);
    await q.query(`ALTER TABLE usage_ledger DROP COLUMN IF EXISTS requests`);
    await q.query(`DROP TABLE IF EXISTS email_verification_tokens`);
    await q.query(`DROP TABLE IF EXISTS account_sessions`);
    await q.query(`DROP TABLE IF EXISTS account_credentials`);
  }
}
