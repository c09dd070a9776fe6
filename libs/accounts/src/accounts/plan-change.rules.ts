import { firstRow, Sql } from '@cars/persistence';
import { effectivePlan, formatLimit, Plan, PlanId, PLANS } from '../plans/plans';

/**
 * The downgrade rule of docs/api/webhooks.md, decided: after a plan change (or a plan lapsing by time), which active
 * endpoints stay active. The oldest are kept, up to the plan's endpoint allowance (null:
 * unlimited); free and expired plans keep none. Returns the ids to pause. The webhooks service
 * applies it (libs/webhook-store `pauseEndpointsBeyondAllowance`) when it hears of a plan change.
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
