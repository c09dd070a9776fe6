import { Sql, withTransaction } from '@cars/persistence';
import { AccountRecord, AccountsRepository } from '../accounts/accounts.repository';
import { isEmailAddress } from '../accounts/accounts.service';
import { AccountsConflictError, AccountsInputError } from '../errors';
import { CredentialsRepository } from './credentials.repository';
import { EmailVerificationsRepository, VerificationTokenState, verificationTokenState } from './email-verifications.repository';
import { SessionsRepository } from './sessions.repository';

/**
 * The steps of the account console that take more than one statement, each in one transaction.
 * Hashing happens before (scrypt is slow: no transaction waits on it).
 */

/** A new console account: Free plan, email unverified, with its password hash. 409-like conflict when the email exists. */
export async function registerAccount(db: Sql, input: { email: string; passwordHash: string }): Promise<AccountRecord> {
  const email = input.email.trim();
  if (!isEmailAddress(email)) throw new AccountsInputError(`"${input.email}" is not an email address`);
  return withTransaction(db, async (tx) => {
    const account = await new AccountsRepository(tx).insert({ email, plan: 'free', emailVerified: false, planExpiresAt: null });
    if (!account) throw new AccountsConflictError('an account with this email address already exists');
    await new CredentialsRepository(tx).insert(account.id, input.passwordHash);
    return account;
  });
}

export type EmailVerificationOutcome =
  | { ok: true; account: AccountRecord }
  | { ok: false; reason: VerificationTokenState | 'unknown' | 'email_changed' };

/**
 * Uses a verification token once: the token row is locked, so two concurrent uses verify once and
 * the second reads `used`. A token verifies the address it was sent to only.
 */
export async function useEmailVerificationToken(db: Sql, tokenHash: string, now: Date): Promise<EmailVerificationOutcome> {
  return withTransaction(db, async (tx) => {
    const tokens = new EmailVerificationsRepository(tx);
    const token = await tokens.find(tokenHash, { lock: true });
    if (!token) return { ok: false, reason: 'unknown' };
    const state = verificationTokenState(token, now);
    if (state !== 'valid') return { ok: false, reason: state };
    const accounts = new AccountsRepository(tx);
    const account = await accounts.find(token.accountId, { lock: true });
    if (!account) return { ok: false, reason: 'unknown' };
    if (account.email.toLowerCase() !== token.email.toLowerCase()) return { ok: false, reason: 'email_changed' };
    await tokens.markUsed(tokenHash, now);
    return { ok: true, account: account.emailVerified ? account : (await accounts.markEmailVerified(account.id))! };
  });
}

/** Sets a new password hash and ends every other session of the account, in one transaction. */
export async function replacePassword(
  db: Sql,
  input: { accountId: string; passwordHash: string; keepSessionId: string | null },
): Promise<{ endedSessions: number }> {
  return withTransaction(db, async (tx) => {
    await new CredentialsRepository(tx).updateHash(input.accountId, input.passwordHash);
    const endedSessions = await new SessionsRepository(tx).deleteOthers(input.accountId, input.keepSessionId);
    return { endedSessions };
  });
}
