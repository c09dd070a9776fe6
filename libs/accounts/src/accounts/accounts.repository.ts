import { Inject, Injectable } from '@nestjs/common';
import { firstRow, PG_POOL, Sql } from '@cars/persistence';
import { PlanId } from '../plans/plans';

export interface AccountRecord {
  id: string;
  email: string;
  emailVerified: boolean;
  plan: PlanId;
  planExpiresAt: Date | null;
  createdAt: Date;
}

const COLUMNS = `id, email, email_verified AS "emailVerified", plan, plan_expires_at AS "planExpiresAt", created_at AS "createdAt"`;

/**
 * SQL of the `accounts` table, over a pg pool (`PG_POOL` when Nest provides it) or the client of
 * a transaction (`new AccountsRepository(tx)`).
 */
@Injectable()
export class AccountsRepository {
  constructor(@Inject(PG_POOL) private readonly sql: Sql) {}

  /** Null when an account with that email (case-insensitive) exists already. */
  insert(account: { email: string; plan: PlanId; emailVerified: boolean; planExpiresAt: Date | null }): Promise<AccountRecord | null> {
    return firstRow<AccountRecord>(
      this.sql,
      `INSERT INTO accounts (email, email_verified, plan, plan_expires_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT ((lower(email))) DO NOTHING RETURNING ${COLUMNS}`,
      [account.email, account.emailVerified, account.plan, account.planExpiresAt],
    );
  }

  /** Inserts unless an account with that email (case-insensitive) exists; returns the account either way. */
  async ensure(account: { email: string; plan: PlanId; emailVerified: boolean }): Promise<AccountRecord> {
    await this.sql.query(
      `INSERT INTO accounts (email, email_verified, plan) VALUES ($1, $2, $3) ON CONFLICT ((lower(email))) DO NOTHING`,
      [account.email, account.emailVerified, account.plan],
    );
    const row = await firstRow<AccountRecord>(this.sql, `SELECT ${COLUMNS} FROM accounts WHERE lower(email) = lower($1)`, [
      account.email,
    ]);
    if (!row) throw new Error(`account ${account.email} vanished while being ensured`);
    return row;
  }

  find(id: string, options: { lock?: boolean } = {}): Promise<AccountRecord | null> {
    return firstRow<AccountRecord>(this.sql, `SELECT ${COLUMNS} FROM accounts WHERE id = $1${options.lock ? ' FOR UPDATE' : ''}`, [
      id,
    ]);
  }

  updatePlan(id: string, plan: PlanId, planExpiresAt: Date | null): Promise<AccountRecord | null> {
    return firstRow<AccountRecord>(
      this.sql,
      `WITH u AS (
         UPDATE accounts SET plan = $2, plan_expires_at = $3, updated_at = now() WHERE id = $1 RETURNING *
       ) SELECT ${COLUMNS} FROM u`,
      [id, plan, planExpiresAt],
    );
  }

  markEmailVerified(id: string): Promise<AccountRecord | null> {
    return firstRow<AccountRecord>(
      this.sql,
      `WITH u AS (
         UPDATE accounts SET email_verified = true, updated_at = now() WHERE id = $1 RETURNING *
       ) SELECT ${COLUMNS} FROM u`,
      [id],
    );
  }
}
