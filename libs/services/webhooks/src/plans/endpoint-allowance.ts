import { planInForce } from '@cars/accounts';
import { pauseEndpointsBeyondAllowance } from '@cars/webhook-store';
import { PoolClient } from 'pg';

/**
 * The downgrade rule of docs/api/webhooks.md for one account, in the caller's transaction: the account row is
 * locked (creates and resumes lock it too, so they see the result), then the active endpoints
 * beyond the allowance of the plan in force are paused, the newest first, and their pending
 * deliveries canceled. Upgrading resumes nothing. Returns the ids paused.
 */
export async function enforceEndpointAllowance(tx: PoolClient, accountId: string): Promise<string[]> {
  const inForce = await planInForce(tx, accountId, { lock: true });
  if (!inForce) return [];
  return pauseEndpointsBeyondAllowance(tx, accountId, inForce.plan.webhookEndpoints);
}
