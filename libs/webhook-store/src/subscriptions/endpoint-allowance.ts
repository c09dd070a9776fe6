import { endpointsToPause, PLANS } from '@cars/accounts';
import { rows, Sql } from '@cars/persistence';

/**
 * The downgrade rule of docs/api/webhooks.md, in the caller's transaction (which holds the account row locked, so
 * concurrent creates and resumes see the result): the account's active endpoints beyond
 * `allowance` (null: unlimited) are paused — the oldest kept — and their pending deliveries
 * canceled. Returns the ids paused.
 */
export async function pauseEndpointsBeyondAllowance(tx: Sql, accountId: string, allowance: number | null): Promise<string[]> {
  const active = await rows<{ id: string; createdAt: Date }>(
    tx,
    `SELECT id, created_at AS "createdAt" FROM webhook_subscriptions WHERE account_id = $1 AND enabled FOR UPDATE`,
    [accountId],
  );
  const pause = endpointsToPause(active, allowance);
  if (pause.length === 0) return [];
  await tx.query(
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
