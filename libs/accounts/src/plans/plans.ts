/** Plan ids as stored in `accounts.plan` (a CHECK constraint holds the same list). */
export type PlanId = 'free' | '1k' | '10k' | '100k';

export interface Plan {
  id: PlanId;
  /** As customers see it: "Free", "1K", "10K", "100K". */
  name: string;
  /** Units per billing period (calendar month, UTC), shared by API requests and successful deliveries. */
  monthlyLimit: number;
  /** `/stats` and webhooks need a paid plan. */
  paid: boolean;
  /** Webhook endpoints the plan allows; null = unlimited. */
  webhookEndpoints: number | null;
}

/** The plans and their limits (docs/api/accounts.md, "Plans"), the free plan included. */
export const PLANS: Readonly<Record<PlanId, Plan>> = {
  free: { id: 'free', name: 'Free', monthlyLimit: 100, paid: false, webhookEndpoints: 0 },
  '1k': { id: '1k', name: '1K', monthlyLimit: 1_000, paid: true, webhookEndpoints: 1 },
  '10k': { id: '10k', name: '10K', monthlyLimit: 10_000, paid: true, webhookEndpoints: 10 },
  '100k': { id: '100k', name: '100K', monthlyLimit: 100_000, paid: true, webhookEndpoints: null },
};

export const PLAN_IDS = Object.keys(PLANS) as PlanId[];

export function isPlanId(value: unknown): value is PlanId {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(PLANS, value);
}

/**
 * The plan an account is on right now: its plan until `planExpiresAt` passes, then Free.
 * A plan without an expiry never lapses.
 */
export function effectivePlan(account: { plan: PlanId; planExpiresAt: Date | null }, now: Date = new Date()): Plan {
  if (account.planExpiresAt !== null && account.planExpiresAt.getTime() <= now.getTime()) return PLANS.free;
  return PLANS[account.plan];
}

/**
 * `effectivePlan(…).monthlyLimit` as a SQL expression over an `accounts` row (`alias`), for a
 * statement that needs the limit in force without a round trip of its own: the same rule (the
 * plan until `plan_expires_at` passes on the database's clock, then Free), the limits from PLANS.
 */
export function effectiveLimitSql(alias: string): string {
  const byPlan = PLAN_IDS.map((id) => `WHEN '${id}' THEN ${PLANS[id].monthlyLimit}`).join(' ');
  return `(CASE WHEN ${alias}.plan_expires_at IS NOT NULL AND ${alias}.plan_expires_at <= now() THEN ${PLANS.free.monthlyLimit}
                ELSE CASE ${alias}.plan ${byPlan} END END)`;
}

/** "1,000" — how limits appear in messages. */
export function formatLimit(limit: number): string {
  return limit.toLocaleString('en-US');
}
