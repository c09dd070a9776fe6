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
import { PG_POOL } from '@cars/persistence';
import { DeliveriesRepository, SubscriptionsRepository } from '@cars/webhook-store';
import { Pool } from 'pg';
import { EndpointScopes, noSuchWebhook } from '../endpoints/endpoint-scope';
import { AccountGate, Features } from '../plans/account-gate';
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
    private readonly endpoints: EndpointScopes,
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
    const deliveryUuid = parsePrefixedId(DELIVERY_ID_PREFIX, deliveryId);
    const checkDeliveryId = async () => (deliveryUuid ? null : noSuchDelivery(deliveryId));
    return this.endpoints.change(accountId, id, { feature: Features.Retry }, async ({ tx, uuid, endpoint }) => {
      const delivery = await this.deliveries.find(tx, uuid, deliveryUuid!, { lock: true });
      if (!delivery) return noSuchDelivery(deliveryId);
      if (!endpoint.enabled) {
        return rpcError(409, conflict('The webhook is paused; resume it (PATCH enabled: true) before retrying its deliveries'));
      }
      const decision = retryDecision(delivery);
      if (!decision.ok) return rpcError(409, conflict(`This delivery cannot be retried: ${decision.reason}`));
      return rpcOk({ data: toDelivery(await this.deliveries.requeue(tx, deliveryUuid!, decision.maxAttempts)) });
    }, checkDeliveryId);
  }

  /** After an outage: every failed delivery of the window gets a new budget (plan rules as for retry). */
  async recover(accountId: string, id: string, body: unknown): Reply<'Recover'> {
    return this.endpoints.change(accountId, id, { feature: Features.Recover }, async ({ tx, uuid, endpoint }) => {
      const [{ now }] = (await tx.query<{ now: Date }>('SELECT now() AS now')).rows;
      const window = parseRecoverWindow(body, now);
      if (!window.ok) return rpcError(400, validationError(window.details));
      if (!endpoint.enabled) {
        return rpcError(409, conflict('The webhook is paused; resume it (PATCH enabled: true) before recovering its deliveries'));
      }
      return rpcOk({ data: { recovered: await this.deliveries.recoverFailed(tx, uuid, window.since, window.until) } });
    });
  }
}
