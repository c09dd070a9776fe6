import { Inject, Injectable } from '@nestjs/common';
import { firstRow, PG_POOL, Sql } from '@cars/persistence';
import { PlanId } from '../plans/plans';

/** A live console session and what the gateway needs to know about its account. */
export interface SessionRecord {
  id: string;
  accountId: string;
  csrfToken: string;
  createdAt: Date;
  idleExpiresAt: Date;
  expiresAt: Date;
  account: { plan: PlanId; planExpiresAt: Date | null; emailVerified: boolean };
}

interface SessionRow {
  id: string;
  accountId: string;
  csrfToken: string;
  createdAt: Date;
  idleExpiresAt: Date;
  expiresAt: Date;
  plan: PlanId;
  planExpiresAt: Date | null;
  emailVerified: boolean;
}

/** A session's idle expiry is moved forward at most this often (one write per minute, not per request). */
const TOUCH_EVERY_MS = 60_000;

/**
 * SQL of `account_sessions`: server-side sessions of the account console. The cookie carries an
 * opaque token; the table holds its SHA-256 hash only. A session ends at the first of its idle
 * expiry (moved forward by use) and its absolute expiry, or when deleted (sign-out, password
 * change).
 */
@Injectable()
export class SessionsRepository {
  constructor(@Inject(PG_POOL) private readonly sql: Sql) {}

  async insert(session: {
    accountId: string;
    tokenHash: string;
    csrfToken: string;
    now: Date;
    idleMs: number;
    absoluteMs: number;
  }): Promise<{ id: string; expiresAt: Date }> {
    const expiresAt = new Date(session.now.getTime() + session.absoluteMs);
    const idleExpiresAt = new Date(Math.min(expiresAt.getTime(), session.now.getTime() + session.idleMs));
    const row = await firstRow<{ id: string }>(
      this.sql,
      `INSERT INTO account_sessions (account_id, token_hash, csrf_token, created_at, last_seen_at, idle_expires_at, expires_at)
       VALUES ($1, $2, $3, $4, $4, $5, $6) RETURNING id`,
      [session.accountId, session.tokenHash, session.csrfToken, session.now, idleExpiresAt, expiresAt],
    );
    return { id: row!.id, expiresAt };
  }

  /**
   * The live session of a token hash, or null (unknown, idle too long, or past its absolute
   * expiry). A use more than a minute after the last recorded one moves the idle expiry forward
   * (never past the absolute one) in the same statement.
   */
  async findLive(tokenHash: string, now: Date, idleMs: number): Promise<SessionRecord | null> {
    const row = await firstRow<SessionRow>(
      this.sql,
      `WITH s AS (
         SELECT id, account_id, csrf_token, created_at, last_seen_at, idle_expires_at, expires_at
           FROM account_sessions
          WHERE token_hash = $1 AND idle_expires_at > $2 AND expires_at > $2
       ), touched AS (
         UPDATE account_sessions x
            SET last_seen_at = $2, idle_expires_at = least(x.expires_at, $2::timestamptz + make_interval(secs => $3::double precision / 1000))
           FROM s
          WHERE x.id = s.id AND s.last_seen_at < $2::timestamptz - make_interval(secs => $4::double precision / 1000)
         RETURNING x.id, x.idle_expires_at
       )
       SELECT s.id, s.account_id AS "accountId", s.csrf_token AS "csrfToken", s.created_at AS "createdAt",
              coalesce(t.idle_expires_at, s.idle_expires_at) AS "idleExpiresAt", s.expires_at AS "expiresAt",
              a.plan, a.plan_expires_at AS "planExpiresAt", a.email_verified AS "emailVerified"
         FROM s JOIN accounts a ON a.id = s.account_id LEFT JOIN touched t ON t.id = s.id`,
      [tokenHash, now, idleMs, TOUCH_EVERY_MS],
    );
    if (!row) return null;
    const { plan, planExpiresAt, emailVerified, ...session } = row;
    return { ...session, account: { plan, planExpiresAt, emailVerified } };
  }

  /** Ends one session (sign-out). */
  async deleteByTokenHash(tokenHash: string): Promise<void> {
    await this.sql.query(`DELETE FROM account_sessions WHERE token_hash = $1`, [tokenHash]);
  }

  /** Ends every session of the account but one (password change); null ends them all. Returns how many ended. */
  async deleteOthers(accountId: string, keepSessionId: string | null): Promise<number> {
    const result = await this.sql.query(
      `DELETE FROM account_sessions WHERE account_id = $1 AND ($2::uuid IS NULL OR id <> $2::uuid)`,
      [accountId, keepSessionId],
    );
    return result.rowCount ?? 0;
  }

  /**
   * Drops sessions past their expiry (housekeeping; expired sessions are never accepted anyway):
   * the account's (at each sign-in, so no account collects dead rows), or every account's.
   */
  async deleteExpired(now: Date, accountId?: string): Promise<number> {
    const result = await this.sql.query(
      `DELETE FROM account_sessions WHERE ($2::uuid IS NULL OR account_id = $2::uuid) AND (expires_at <= $1 OR idle_expires_at <= $1)`,
      [now, accountId ?? null],
    );
    return result.rowCount ?? 0;
  }
}
