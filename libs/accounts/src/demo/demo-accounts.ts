import { randomBytes } from 'node:crypto';
import { Sql, withTransaction, writeInstanceState } from '@cars/persistence';
import { AccountsRepository } from '../accounts/accounts.repository';
import { deriveApiKey } from '../keys/api-key';
import { ApiKeysRepository } from '../keys/api-keys.repository';
import { PLAN_IDS, PlanId, PLANS } from '../plans/plans';

export interface DemoAccount {
  /** The plan the demo account is on now (an operator may have changed it). */
  plan: PlanId;
  planName: string;
  monthlyLimit: number;
  accountId: string;
  email: string;
  apiKey: string;
}

/** Demo accounts use the reserved `.invalid` TLD: no customer can hold these addresses. */
export const DEMO_EMAIL_DOMAIN = 'demo.invalid';
const SECRET_NAME = 'demo_api_keys';
const LOCK_ID = 727002;
/** How many revoked generations of a demo key are skipped before giving up. */
const MAX_GENERATIONS = 100;

/**
 * One account per plan for the quick start, created on first call; every call returns the same
 * API keys so `npm start` can print them on every start.
 *
 * Keys stay printable without storing them: a random 32-byte secret is stored once in
 * `instance_state`, and each demo key is HMAC-SHA256(secret, "demo:<plan>:<generation>"),
 * of which the database holds only the SHA-256 hash like any other key. Whoever can read the
 * database can recompute the demo keys — acceptable for demo accounts, whose keys are printed
 * to the console anyway; customer keys are random and never derivable. If an operator revokes a
 * demo key, the next call moves to the next generation, so a fresh demo key appears.
 *
 * Idempotent and safe when several processes start at once (transaction-scoped advisory lock).
 */
export async function ensureDemoAccounts(db: Sql): Promise<DemoAccount[]> {
  return withTransaction(db, async (tx) => {
    const accounts = new AccountsRepository(tx);
    const keys = new ApiKeysRepository(tx);
    await tx.query(`SELECT pg_advisory_xact_lock(${LOCK_ID})`);
    const stored = await writeInstanceState(tx, SECRET_NAME, randomBytes(32).toString('base64'), { ifAbsent: true });
    const secret = Buffer.from(stored, 'base64');

    const demo: DemoAccount[] = [];
    for (const planId of PLAN_IDS) {
      const account = await accounts.ensure({
        email: `${planId}@${DEMO_EMAIL_DOMAIN}`,
        plan: planId,
        emailVerified: true,
      });
      let apiKey: string | undefined;
      for (let generation = 0; generation < MAX_GENERATIONS && !apiKey; generation += 1) {
        const key = deriveApiKey(secret, `demo:${planId}:${generation}`);
        const existing = await keys.findByHash(key.keyHash);
        if (!existing) {
          await keys.insert(account.id, key);
          apiKey = key.apiKey;
        } else if (existing.revokedAt === null && existing.accountId === account.id) {
          apiKey = key.apiKey;
        }
      }
      if (!apiKey) throw new Error(`every demo key generation of the ${planId} account is revoked`);
      const plan = PLANS[account.plan];
      demo.push({
        plan: plan.id,
        planName: plan.name,
        monthlyLimit: plan.monthlyLimit,
        accountId: account.id,
        email: account.email,
        apiKey,
      });
    }
    return demo;
  });
}
