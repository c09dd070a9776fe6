import { Inject, Injectable } from '@nestjs/common';
import { firstRow, PG_POOL, Sql } from '@cars/persistence';
import { AccountRecord } from '../accounts/accounts.repository';
import { PlanId } from '../plans/plans';

/** An account with its password hash: what sign-in reads. */
export interface AccountCredentialsRecord {
  account: AccountRecord;
  passwordHash: string;
}

interface Row {
  id: string;
  email: string;
  emailVerified: boolean;
  plan: PlanId;
  planExpiresAt: Date | null;
  createdAt: Date;
  passwordHash: string;
}

/**
 * SQL of `account_credentials`: one password hash per account that signs in to the console
 * (accounts made by an operator have none until they set one). Hashes only (see `hashPassword`).
 */
@Injectable()
export class CredentialsRepository {
  constructor(@Inject(PG_POOL) private readonly sql: Sql) {}

  async insert(accountId: string, passwordHash: string): Promise<void> {
    await this.sql.query(`INSERT INTO account_credentials (account_id, password_hash) VALUES ($1, $2)`, [accountId, passwordHash]);
  }

  /** The account and its hash by email (case-insensitive), or null (no account, or no password). */
  async findByEmail(email: string): Promise<AccountCredentialsRecord | null> {
    const row = await firstRow<Row>(
      this.sql,
      `SELECT a.id, a.email, a.email_verified AS "emailVerified", a.plan, a.plan_expires_at AS "planExpiresAt",
              a.created_at AS "createdAt", c.password_hash AS "passwordHash"
         FROM accounts a JOIN account_credentials c ON c.account_id = a.id
        WHERE lower(a.email) = lower($1)`,
      [email],
    );
    return row ? toRecord(row) : null;
  }

  async findHash(accountId: string): Promise<string | null> {
    const row = await firstRow<{ passwordHash: string }>(
      this.sql,
      `SELECT password_hash AS "passwordHash" FROM account_credentials WHERE account_id = $1`,
      [accountId],
    );
    return row?.passwordHash ?? null;
  }

  async updateHash(accountId: string, passwordHash: string): Promise<void> {
    await this.sql.query(
      `UPDATE account_credentials SET password_hash = $2, password_changed_at = now(), updated_at = now() WHERE account_id = $1`,
      [accountId, passwordHash],
    );
  }
}

function toRecord(row: Row): AccountCredentialsRecord {
  const { passwordHash, ...account } = row;
  return { account, passwordHash };
}
