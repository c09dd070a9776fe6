import { isUniqueViolation, Sql, withTransaction } from '@cars/persistence';
import { generateApiKey } from '../keys/api-key';
import { ApiKeyRecord, ApiKeysRepository } from '../keys/api-keys.repository';
import { isUuid } from '../db';
import { AccountsConflictError, AccountsInputError, AccountsNotFoundError } from '../errors';
import { getUsage, setUsedUnits, Usage } from '../ledger/usage-ledger';
import { billingPeriod } from '../ledger/billing-period';
import { effectivePlan, isPlanId, PLAN_IDS, PlanId, PLANS } from '../plans/plans';
import { AccountRecord, AccountsRepository } from './accounts.repository';

/** Operator-level account management (admin CLI, demo accounts, later the console). */

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** A plausible email address (one @, a dot in the domain, no spaces): the shape check of every way in. */
export function isEmailAddress(value: string): boolean {
  return EMAIL.test(value) && value.length <= 254;
}

export function parsePlan(value: unknown): PlanId {
  if (!isPlanId(value)) throw new AccountsInputError(`plan must be one of ${PLAN_IDS.join(', ')} (got "${String(value)}")`);
  return value;
}

function assertAccountId(accountId: string): void {
  if (!isUuid(accountId)) throw new AccountsInputError(`account id must be a UUID (got "${accountId}")`);
}

async function requireAccount(sql: Sql, accountId: string, lock = false): Promise<AccountRecord> {
  assertAccountId(accountId);
  const account = await new AccountsRepository(sql).find(accountId, { lock });
  if (!account) throw new AccountsNotFoundError(`no account with id ${accountId}`);
  return account;
}

export interface CreatedApiKey {
  keyId: string;
  accountId: string;
  prefix: string;
  /** Shown once: only its hash is stored. */
  apiKey: string;
}

export async function createAccount(
  db: Sql,
  input: { email: string; plan: PlanId; emailVerified?: boolean; planExpiresAt?: Date | null },
): Promise<{ account: AccountRecord; key: CreatedApiKey }> {
  const email = input.email.trim();
  if (!EMAIL.test(email)) throw new AccountsInputError(`"${input.email}" is not an email address`);
  const plan = parsePlan(input.plan);
  return withTransaction(db, async (tx) => {
    const account = await new AccountsRepository(tx).insert({
      email,
      plan,
      emailVerified: input.emailVerified ?? false,
      planExpiresAt: input.planExpiresAt ?? null,
    });
    if (!account) throw new AccountsConflictError(`an account with email ${email} already exists`);
    const key = await insertNewKey(tx, account.id);
    return { account, key };
  });
}

async function insertNewKey(db: Sql, accountId: string): Promise<CreatedApiKey> {
  // A prefix collision (62^7 space) is practically impossible; retry anyway rather than fail.
  for (let attempt = 0; ; attempt += 1) {
    const key = generateApiKey();
    try {
      // In a transaction (a savepoint in the caller's): a failed attempt leaves it usable for the next.
      const record = await withTransaction(db, (tx) => new ApiKeysRepository(tx).insert(accountId, key));
      return { keyId: record!.id, accountId, prefix: key.prefix, apiKey: key.apiKey };
    } catch (error) {
      if (attempt < 3 && isUniqueViolation(error)) continue;
      throw error;
    }
  }
}

/**
 * A new key of the account. With `maxActive` (the console's cap), an account that has that many
 * unrevoked keys gets none (AccountsConflictError): the account row is locked while the keys are
 * counted and the new one inserted, so concurrent creations take turns and the cap holds.
 */
export async function createApiKey(db: Sql, accountId: string, options: { maxActive?: number } = {}): Promise<CreatedApiKey> {
  return withTransaction(db, async (tx) => {
    await requireAccount(tx, accountId, true);
    if (options.maxActive !== undefined && (await new ApiKeysRepository(tx).countActive(accountId)) >= options.maxActive) {
      throw new AccountsConflictError(`the account has ${options.maxActive} active API keys already`);
    }
    return insertNewKey(tx, accountId);
  });
}

/**
 * Revokes a key by its prefix. Gateways stop accepting it within their key cache TTL
 * (API_KEY_CACHE_TTL_MS, at most 30 s).
 */
export async function revokeApiKey(db: Sql, prefix: string): Promise<ApiKeyRecord> {
  const record = await new ApiKeysRepository(db).revokeByPrefix(prefix.trim());
  if (!record) throw new AccountsNotFoundError(`no API key with prefix ${prefix}`);
  return record;
}

/**
 * Revokes one key of the account by id (the console). Unknown ids and other accounts' keys are
 * not found alike. Gateways stop accepting it at once (the `account_changes` broadcast).
 */
export async function revokeApiKeyOfAccount(db: Sql, accountId: string, keyId: string): Promise<ApiKeyRecord> {
  const record = isUuid(keyId) ? await new ApiKeysRepository(db).revokeOfAccount(accountId, keyId) : null;
  if (!record) throw new AccountsNotFoundError(`no API key with id ${keyId} on this account`);
  return record;
}

/**
 * Changes the plan (and its expiry). The change is announced, not applied here: the row's update
 * notifies `account_changes` at commit, and the webhooks service pauses what the new plan no
 * longer allows (its sweep catches a missed notification).
 */
export async function setPlan(
  db: Sql,
  input: { accountId: string; plan: PlanId; planExpiresAt?: Date | null },
): Promise<AccountRecord> {
  const plan = parsePlan(input.plan);
  const planExpiresAt = input.planExpiresAt ?? null;
  if (plan === 'free' && planExpiresAt !== null) throw new AccountsInputError('the free plan does not expire');
  return withTransaction(db, async (tx) => {
    await requireAccount(tx, input.accountId, true);
    return (await new AccountsRepository(tx).updatePlan(input.accountId, plan, planExpiresAt))!;
  });
}

export async function verifyEmail(db: Sql, accountId: string): Promise<AccountRecord> {
  assertAccountId(accountId);
  const account = await new AccountsRepository(db).markEmailVerified(accountId);
  if (!account) throw new AccountsNotFoundError(`no account with id ${accountId}`);
  return account;
}

export async function setUsage(db: Sql, accountId: string, used: number): Promise<Usage> {
  if (!Number.isInteger(used) || used < 0 || used > 2_000_000_000) {
    throw new AccountsInputError(`used must be a non-negative integer (got "${used}")`);
  }
  await requireAccount(db, accountId);
  return setUsedUnits(db, accountId, used);
}

export interface AccountSummary {
  account: AccountRecord;
  /** The plan in force now (Free once plan_expires_at has passed). */
  effectivePlan: PlanId;
  usage: Usage & { limit: number; periodEnd: Date };
}

export async function describeAccount(db: Sql, accountId: string, now: Date = new Date()): Promise<AccountSummary> {
  const account = await requireAccount(db, accountId);
  const plan = effectivePlan(account, now);
  const usage = await getUsage(db, accountId, now);
  return {
    account,
    effectivePlan: plan.id,
    usage: { ...usage, limit: PLANS[plan.id].monthlyLimit, periodEnd: billingPeriod(now).end },
  };
}
