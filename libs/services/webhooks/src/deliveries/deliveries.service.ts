import { Inject, Injectable } from '@nestjs/common';
import {
  conflict,
  DELIVERY_ID_PREFIX,
  validationError,
  notFound,
  parsePrefixedId,
  rpcError,
  rpcOk,
  RpcReply,
  RpcResponse,
  WEBHOOK_ID_PREFIX,
  WebhooksPatterns,
} from '@cars/contracts';
import { PG_POOL, withTransaction } from '@cars/persistence';
import { Pool } from 'pg';
import { AccountGate, Features } from '../plans/account-gate';
import { noSuchWebhook } from '../subscriptions/subscriptions.service';
import { SubscriptionsRepository } from '../subscriptions/subscriptions.repository';
import { DeliveriesRepository } from './deliveries.repository';
import { toDelivery } from './delivery.projection';
import { parseRecoverWindow } from './recover-window';
import { retryDecision } from './retry-rules';

type Reply<P extends keyof typeof WebhooksPatterns> = Promise<RpcReply<RpcResponse<(typeof WebhooksPatterns)[P]>>>;

const noSuchDelivery = (id: string) => rpcError(404, notFound(`No delivery with id ${id} on this webhook`));

/** The deliveries routes: the 20 most recent, and a manual retry with its original event and payload. */
@Injectable()
export class DeliveriesService {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly deliveries: DeliveriesRepository,
    private readonly gate: AccountGate,
  ) {}

  async recent(accountId: string, id: string): Reply<'ListDeliveries'> {
    const uuid = parsePrefixedId(WEBHOOK_ID_PREFIX, id);
    if (!uuid) return noSuchWebhook(id);
    await this.gate.settle(accountId);
    const row = await this.subscriptions.find(this.pool, accountId, uuid);
    if (!row) return noSuchWebhook(id);
    return rpcOk({ data: (await this.deliveries.recent(uuid)).map(toDelivery) });
  }

  /**
   * A `failed` delivery, or a `pending` one waiting for its next automatic retry, is due now with
   * a new budget of six attempts; the endpoint must be active. Anything else is a 409.
   */
  async retry(accountId: string, id: string, deliveryId: string): Reply<'RetryDelivery'> {
    const uuid = parsePrefixedId(WEBHOOK_ID_PREFIX, id);
    if (!uuid) return noSuchWebhook(id);
    const deliveryUuid = parsePrefixedId(DELIVERY_ID_PREFIX, deliveryId);
    if (!deliveryUuid) return noSuchDelivery(deliveryId);
    return withTransaction(this.pool, async (client) => {
      const gate = await this.gate.lock(client, accountId, Features.Retry);
      if (!gate.ok) return gate.reply;
      const subscription = await this.subscriptions.find(client, accountId, uuid, { lock: true });
      if (!subscription) return noSuchWebhook(id);
      const delivery = await this.deliveries.find(client, uuid, deliveryUuid, { lock: true });
      if (!delivery) return noSuchDelivery(deliveryId);
      if (!subscription.enabled) {
        return rpcError(409, conflict('The webhook is paused; resume it (PATCH enabled: true) before retrying its deliveries'));
      }
      const decision = retryDecision(delivery);
      if (!decision.ok) return rpcError(409, conflict(`This delivery cannot be retried: ${decision.reason}`));
      return rpcOk({ data: toDelivery(await this.deliveries.requeue(client, deliveryUuid, decision.maxAttempts)) });
    });
  }

  /** After an outage: every failed delivery of the window gets a new budget (plan rules as for retry). */
  async recover(accountId: string, id: string, body: unknown): Reply<'Recover'> {
    const uuid = parsePrefixedId(WEBHOOK_ID_PREFIX, id);
    if (!uuid) return noSuchWebhook(id);
    return withTransaction(this.pool, async (client) => {
      const gate = await this.gate.lock(client, accountId, Features.Recover);
      if (!gate.ok) return gate.reply;
      const subscription = await this.subscriptions.find(client, accountId, uuid, { lock: true });
      if (!subscription) return noSuchWebhook(id);
      const [{ now }] = (await client.query<{ now: Date }>('SELECT now() AS now')).rows;
      const window = parseRecoverWindow(body, now);
      if (!window.ok) return rpcError(400, validationError(window.details));
      if (!subscription.enabled) {
        return rpcError(409, conflict('The webhook is paused; resume it (PATCH enabled: true) before recovering its deliveries'));
      }
      return rpcOk({ data: { recovered: await this.deliveries.recoverFailed(client, uuid, window.since, window.until) } });
    });
  }
}
