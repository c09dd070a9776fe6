import { Inject, Injectable } from '@nestjs/common';
import { Plan } from '@cars/accounts';
import { notFound, parsePrefixedId, rpcError, RpcReply, WEBHOOK_ID_PREFIX } from '@cars/contracts';
import { PG_POOL, withTransaction } from '@cars/persistence';
import { SubscriptionRow, SubscriptionsRepository } from '@cars/webhook-store';
import { Pool, PoolClient } from 'pg';
import { AccountGate } from '../plans/account-gate';

export const noSuchWebhook = (id: string) => rpcError(404, notFound(`No webhook with id ${id}`));

/**
 * The account rule a change to one endpoint passes first: `null`, none (the endpoint's row lock
 * only); otherwise the account row locked (which serializes creates, resumes and plan changes of
 * one account), and when a feature is named, its plan rule (a verified email and an active paid
 * plan).
 */
export type AccountRule = { feature: string | undefined } | null;

/** One endpoint of the account, locked in the transaction of the change. */
export interface EndpointScope {
  tx: PoolClient;
  /** The endpoint's id without its prefix. */
  uuid: string;
  endpoint: SubscriptionRow;
  /** The plan in force, when the account row was locked. */
  plan: Plan | null;
}

/**
 * What every change to one endpoint begins with: its id parsed (a malformed id is not found, like
 * an unknown one), `before` (checks that need no transaction, such as the destination of a new
 * URL), then a transaction: the account rule, the endpoint found and locked, else a 404.
 */
@Injectable()
export class EndpointScopes {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly gate: AccountGate,
  ) {}

  change<T>(
    accountId: string,
    id: string,
    rule: NonNullable<AccountRule>,
    work: (scope: EndpointScope & { plan: Plan }) => Promise<RpcReply<T>>,
    before?: () => Promise<RpcReply<never> | null>,
  ): Promise<RpcReply<T>>;
  change<T>(accountId: string, id: string, rule: null, work: (scope: EndpointScope) => Promise<RpcReply<T>>): Promise<RpcReply<T>>;
  async change<T>(
    accountId: string,
    id: string,
    rule: AccountRule,
    work: (scope: EndpointScope & { plan: Plan }) => Promise<RpcReply<T>>,
    before?: () => Promise<RpcReply<never> | null>,
  ): Promise<RpcReply<T>> {
    const uuid = parsePrefixedId(WEBHOOK_ID_PREFIX, id);
    if (!uuid) return noSuchWebhook(id);
    const refused = await before?.();
    if (refused) return refused;
    return withTransaction(this.pool, async (tx) => {
      let plan: Plan | null = null;
      if (rule) {
        const gate = await this.gate.lock(tx, accountId, rule.feature);
        if (!gate.ok) return gate.reply;
        plan = gate.plan;
      }
      const endpoint = await this.subscriptions.find(tx, accountId, uuid, { lock: true });
      if (!endpoint) return noSuchWebhook(id);
      // The overloads pair a null plan with the work that takes none.
      return work({ tx, uuid, endpoint, plan: plan as Plan });
    });
  }
}
