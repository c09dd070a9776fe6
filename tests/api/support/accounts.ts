import { randomUUID } from 'node:crypto';
import { createAccount, getUsage, PlanId, setUsedUnits } from '@cars/accounts';
import { DataSource } from 'typeorm';
import { pgPoolOf } from '@cars/persistence';

export interface TestAccount {
  accountId: string;
  apiKey: string;
  keyPrefix: string;
  email: string;
}

/**
 * An account of its own (unique email) with one API key: specs never share ledger rows or
 * burst buckets, so they need no truncation of the accounts tables.
 */
export async function createTestAccount(
  db: DataSource,
  options: { plan?: PlanId; verified?: boolean; used?: number; planExpiresAt?: Date | null } = {},
): Promise<TestAccount> {
  const email = `test-${randomUUID()}@example.test`;
  const { account, key } = await createAccount(pgPoolOf(db), {
    email,
    plan: options.plan ?? '100k',
    emailVerified: options.verified ?? true,
    planExpiresAt: options.planExpiresAt ?? null,
  });
  if (options.used !== undefined) await setUsedUnits(pgPoolOf(db), account.id, options.used);
  return { accountId: account.id, apiKey: key.apiKey, keyPrefix: key.prefix, email };
}

/**
 * The account's usage once every reservation is settled: the gateway commits or releases a unit
 * as the response leaves, so the ledger can trail the last response by a moment.
 */
export async function settledUsage(db: DataSource, accountId: string, timeoutMs = 10000): Promise<{ used: number; reserved: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { used, reserved } = await getUsage(pgPoolOf(db), accountId);
    if (reserved === 0 || Date.now() > deadline) return { used, reserved };
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
