import type { PlanId } from '../plans/plans';
import type { AccountRecord } from './accounts.repository';

/**
 * An account as it leaves the system: the account area's `account` (AccountDto in the OpenAPI
 * document) and, with `id` under its documented name `account_id`, the admin CLI's account
 * output (docs/api/accounts.md). One projection, so the two cannot drift apart.
 */
export interface AccountJson {
  id: string;
  email: string;
  email_verified: boolean;
  plan: PlanId;
  plan_expires_at: string | null;
  created_at: string;
}

export function accountJson(account: AccountRecord): AccountJson {
  return {
    id: account.id,
    email: account.email,
    email_verified: account.emailVerified,
    plan: account.plan,
    plan_expires_at: account.planExpiresAt?.toISOString() ?? null,
    created_at: account.createdAt.toISOString(),
  };
}
