import { firstRow, rows, Sql } from '@cars/persistence';
import { effectivePlan, formatLimit, Plan, PlanId, PLANS } from '../plans/plans';

export interface PlanChange {
  accountId: string;
  from: { plan: PlanId; planExpiresAt: Date | null };
  to: { plan: PlanId; planExpiresAt: Date | null };
}

/**
 * What else happens when an account's plan changes, inside the transaction that changes it (the
 * account row is locked): SPEC.md's downgrade rule — endpoints beyond the new plan's allowance are
 * paused, the oldest active ones kept, and the paused endpoints' pending deliveries canceled.
 * Upgrading resumes nothing. A plan that lapses by time is found by the webhooks service's sweep,
 * which applies the same rule (`enforceEndpointAllowance`).
 */
export async function applyPlanChangeRules(tx: Sql, change: PlanChange): Promise<void> {
  await enforceEndpointAllowance(tx, change.accountId);
}

/**
 * After a plan change: which active endpoints stay active. The oldest are kept, up to the plan's
 * endpoint allowance (null: unlimited); free and expired plans keep none. Returns the ids to pause.
 */
export function endpointsToPause(active: readonly { id: string; createdAt: Date }[], allowance: number | null): string[] {
  if (allowance === null) return [];
  const oldestFirst = [...active].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
  return oldestFirst.slice(allowance).map((endpoint) => endpoint.id);
}

/** The account's plan in force by the database clock (the clock that stamps events and expiries). */
export async function planInForce(
  db: Sql,
  accountId: string,
  options: { lock?: boolean } = {},
): Promise<{ plan: Plan; account: { plan: PlanId; planExpiresAt: Date | null; emailVerified: boolean } } | null> {
  const row = await firstRow<{ plan: PlanId; planExpiresAt: Date | null; emailVerified: boolean; now: Date }>(
    db,
    `SELECT plan, plan_expires_at AS "planExpiresAt", email_verified AS "emailVerified", now() AS now
       FROM accounts WHERE id = $1${options.lock ? ' FOR UPDATE' : ''}`,
    [accountId],
  );
  if (!row) return null;
  const account = { plan: row.plan, planExpiresAt: row.planExpiresAt, emailVerified: row.emailVerified };
  return { plan: effectivePlan(account, row.now), account };
}

/**
 * Pauses the account's active endpoints beyond the allowance of the plan in force (the newest
 * go first) and cancels their pending deliveries. Locks the account row, so concurrent creates
 * and resumes (which lock it too) see the result. Returns the ids paused.
 */
export async function enforceEndpointAllowance(db: Sql, accountId: string): Promise<string[]> {
  const inForce = await planInForce(db, accountId, { lock: true });
  if (!inForce) return [];
  const active = await rows<{ id: string; createdAt: Date }>(
    db,
    `SELECT id, created_at AS "createdAt" FROM webhook_subscriptions WHERE account_id = $1 AND enabled FOR UPDATE`,
    [accountId],
  );
  const pause = endpointsToPause(active, inForce.plan.webhookEndpoints);
  if (pause.length === 0) return [];
  await db.query(
    `WITH paused AS (
       UPDATE webhook_subscriptions SET enabled = false, updated_at = now() WHERE id = ANY($1::uuid[]) RETURNING id
     )
     UPDATE webhook_deliveries SET status = 'canceled', waiting_reason = NULL, next_attempt_at = NULL, updated_at = now()
      WHERE subscription_id IN (SELECT id FROM paused) AND status = 'pending'
      RETURNING id`,
    [pause],
  );
  return pause;
}

/** Accounts with more active endpoints than the plan in force allows (an expired plan allows none). */
export async function accountsOverEndpointAllowance(db: Sql, accountId?: string): Promise<string[]> {
  const allowance = Object.values(PLANS)
    .map((plan) => `WHEN '${plan.id}' THEN ${plan.webhookEndpoints === null ? 'NULL' : plan.webhookEndpoints}`)
    .join(' ');
  const found = await rows<{ id: string }>(
    db,
    `SELECT a.id
       FROM accounts a JOIN webhook_subscriptions s ON s.account_id = a.id AND s.enabled
      WHERE $1::uuid IS NULL OR a.id = $1
      GROUP BY a.id
     HAVING count(*) > CASE WHEN a.plan_expires_at IS NOT NULL AND a.plan_expires_at <= now() THEN ${PLANS.free.webhookEndpoints}
                            ELSE CASE a.plan ${allowance} END END`,
    [accountId ?? null],
  );
  return found.map((row) => row.id);
}

/**
 * Why an account may not use a feature that needs an active paid plan (and, for webhook changes,
 * a verified email): the 403 message, or null when it may. One wording for the gateway's check
 * and the webhooks service's own.
 */
export function paidFeatureRefusal(
  feature: string,
  account: { plan: PlanId; planExpiresAt: Date | null; emailVerified: boolean },
  options: { verifiedEmail: boolean; now?: Date },
): string | null {
  const plan = effectivePlan(account, options.now);
  if (!plan.paid) {
    const own = PLANS[account.plan];
    const current =
      own.paid && account.planExpiresAt
        ? `the ${own.name} plan of this account expired on ${account.planExpiresAt.toISOString()}, so it is on the Free plan`
        : `this account is on the ${plan.name} plan`;
    return `${feature} requires an active paid plan (1K, 10K or 100K); ${current}`;
  }
  if (options.verifiedEmail && !account.emailVerified) return `${feature} requires a verified email address on the account`;
  return null;
}

/** "the 1K plan allows 1 webhook endpoint" — for the 409 of the endpoint allowance. */
export function endpointAllowanceMessage(plan: Plan): string {
  const n = plan.webhookEndpoints;
  return n === null
    ? `the ${plan.name} plan allows unlimited webhook endpoints`
    : `the ${plan.name} plan allows ${formatLimit(n)} webhook endpoint${n === 1 ? '' : 's'}`;
}
