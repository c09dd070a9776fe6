import { Inject, Injectable } from '@nestjs/common';
import { PG_POOL, Sql, withTransaction } from '@cars/persistence';
import { Pool } from 'pg';
import { paidFeatureRefusal, Plan, planInForce } from '@cars/accounts';
import { forbidden, notFound, rpcError, RpcReply } from '@cars/contracts';
import { accountsOverEndpointAllowance } from '@cars/webhook-store';
import { enforceEndpointAllowance } from './endpoint-allowance';

/** What each webhook change needs, by name in the 403: a verified email and an active paid plan (docs/api/webhooks.md). */
export const Features = {
  Create: 'Creating webhooks',
  Edit: 'Editing webhooks',
  Resume: 'Resuming a webhook',
  Rotate: 'Rotating webhook secrets',
  Test: 'Sending test events',
  Retry: 'Retrying deliveries',
  Recover: 'Recovering deliveries',
} as const;

export type Gate = { ok: true; plan: Plan } | { ok: false; reply: RpcReply<never> };

/**
 * The account rules of the webhook routes, read from the database in the caller's transaction
 * (the gateway checked them from its cache already; this is the authoritative check). The account
 * row is locked, which serializes creates, resumes and plan changes of one account.
 */
@Injectable()
export class AccountGate {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async lock(sql: Sql, accountId: string, feature?: string): Promise<Gate> {
    const inForce = await planInForce(sql, accountId, { lock: true });
    if (!inForce) return { ok: false, reply: rpcError(404, notFound('No such account')) };
    if (feature) {
      const refusal = paidFeatureRefusal(feature, inForce.account, { verifiedEmail: true });
      if (refusal) return { ok: false, reply: rpcError(403, forbidden(refusal)) };
    }
    return { ok: true, plan: inForce.plan };
  }

  /**
   * Pauses what a lapsed plan no longer allows before the account reads its endpoints (the sweep
   * does the same for every account; this makes it exact at the moment of reading).
   */
  async settle(accountId: string): Promise<void> {
    const over = await accountsOverEndpointAllowance(this.pool, accountId);
    if (over.length > 0) await withTransaction(this.pool, (client) => enforceEndpointAllowance(client, accountId));
  }
}
