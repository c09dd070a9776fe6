import { EntityManager } from 'typeorm';
import { PlanId } from '../plans/plans';

export interface PlanChange {
  accountId: string;
  from: { plan: PlanId; planExpiresAt: Date | null };
  to: { plan: PlanId; planExpiresAt: Date | null };
}

/**
 * What else happens when an operator changes an account's plan, inside the transaction that
 * changes it (the account row is locked). The hook point for SPEC.md's downgrade rule: when the
 * new plan allows fewer webhook endpoints (`PLANS[to].webhookEndpoints`), pause the newest
 * active endpoints beyond the allowance, keep the oldest, and cancel the paused endpoints'
 * queued deliveries; upgrading resumes nothing. Webhooks do not exist yet, so there is nothing
 * to do: the webhooks work adds its rule here.
 *
 * A plan that lapses by time (plan_expires_at passing) is not a change made here: the webhooks
 * work must also apply the rule when it finds an expired plan (sweep or check at use).
 */
export async function applyPlanChangeRules(_tx: EntityManager, _change: PlanChange): Promise<void> {
  // No plan-dependent resources yet.
}
