import { Inject, Injectable } from '@nestjs/common';
import { endpointAllowanceMessage } from '@cars/accounts';
import {
  buildEventEnvelope,
  conflict,
  EventTypes,
  ListWebhooksRequestDto,
  newEventId,
  parsePrefixedId,
  rpcError,
  rpcOk,
  RpcReply,
  RpcResponse,
  validationError,
  WEBHOOK_ID_PREFIX,
  WEBHOOK_TEST_MESSAGE,
  WebhookDelivery,
  WEBHOOKS_DEFAULT_LIMIT,
  WebhooksPatterns,
} from '@cars/contracts';
import { PG_POOL, withTransaction } from '@cars/persistence';
import { DeliveriesRepository, SubscriptionRow, SubscriptionsRepository } from '@cars/webhook-store';
import { Pool } from 'pg';
import { DestinationGuard } from '../config/destination-guard';
import { SecretBox } from '../config/secret-box';
import { toDelivery } from '../deliveries/delivery.projection';
import { EndpointScopes, noSuchWebhook } from '../endpoints/endpoint-scope';
import { AccountGate, Features } from '../plans/account-gate';
import { toSubscription } from './subscription.projection';
import { changesActivation, parseCreateInput, parsePatchInput, SubscriptionInput, SubscriptionPatch } from './subscription-input';

/**
 * `Retry-After` of the 409 a delete gets while an attempt is in flight: a short poll, since an
 * attempt ends within the receiver timeout (10 s) and most within a second.
 */
export const DELETE_RETRY_AFTER_SECONDS = 2;

type Reply<P extends keyof typeof WebhooksPatterns> = Promise<RpcReply<RpcResponse<(typeof WebhooksPatterns)[P]>>>;

/** One test per endpoint per minute. */
export const TEST_COOLDOWN_SECONDS = 60;
/** How long the previous secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_HOURS = 24;

const inputOf = (row: SubscriptionRow): SubscriptionInput => ({
  url: row.url,
  description: row.description,
  event_types: row.event_types,
  filters: row.filters,
});

/**
 * Subscription management (docs/api/webhooks.md): bodies checked member by member, the
 * destination by net-guard, the account's plan and endpoint allowance in the same transaction
 * that writes, activation boundaries from the database clock.
 */
@Injectable()
export class SubscriptionsService {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly deliveries: DeliveriesRepository,
    private readonly destinations: DestinationGuard,
    private readonly secrets: SecretBox,
    private readonly gate: AccountGate,
    private readonly endpoints: EndpointScopes,
  ) {}

  async list(request: ListWebhooksRequestDto): Reply<'List'> {
    await this.gate.settle(request.account_id);
    const page = request.page ?? 1;
    const limit = request.limit ?? WEBHOOKS_DEFAULT_LIMIT;
    const { rows, total } = await this.subscriptions.page(request.account_id, limit, (page - 1) * limit);
    return rpcOk({ data: rows.map(toSubscription), meta: { total, page, limit, total_pages: Math.ceil(total / limit) } });
  }

  async get(accountId: string, id: string): Reply<'Get'> {
    const uuid = parsePrefixedId(WEBHOOK_ID_PREFIX, id);
    if (!uuid) return noSuchWebhook(id);
    await this.gate.settle(accountId);
    const row = await this.subscriptions.find(this.pool, accountId, uuid);
    return row ? rpcOk({ data: toSubscription(row) }) : noSuchWebhook(id);
  }

  async create(accountId: string, body: unknown): Reply<'Create'> {
    const input = parseCreateInput(body);
    if (!input.ok) return rpcError(400, validationError(input.details));
    const destination = await this.destinations.check(input.value.url);
    if (!destination.ok) return rpcError(400, validationError({ url: [destination.message] }));
    const { secret, sealed } = this.secrets.issue();
    return withTransaction(this.pool, async (client) => {
      const gate = await this.gate.lock(client, accountId, Features.Create);
      if (!gate.ok) return gate.reply;
      const allowance = gate.plan.webhookEndpoints;
      if (allowance !== null && (await this.subscriptions.count(client, accountId)) >= allowance) {
        return rpcError(
          409,
          conflict(
            `Webhook endpoint allowance reached: ${endpointAllowanceMessage(gate.plan)} (paused endpoints count); ` +
              'delete one or upgrade the plan',
          ),
        );
      }
      const row = await this.subscriptions.insert(client, accountId, input.value, sealed);
      return rpcOk({ data: toSubscription(row), secret });
    });
  }

  async update(accountId: string, id: string, body: unknown): Reply<'Update'> {
    const patch = parsePatchInput(body);
    const { enabled, ...fields }: SubscriptionPatch = patch.ok ? patch.value : {};
    const pauseOnly = Object.keys(fields).length === 0 && enabled === false;
    const checkBody = async () => {
      if (!patch.ok) return rpcError(400, validationError(patch.details));
      if (fields.url !== undefined) {
        const destination = await this.destinations.check(fields.url);
        if (!destination.ok) return rpcError(400, validationError({ url: [destination.message] }));
      }
      return null;
    };
    return this.endpoints.change(accountId, id, { feature: pauseOnly ? undefined : Features.Edit }, async ({ tx, uuid, endpoint: row, plan }) => {
      const before = inputOf(row);
      const after: SubscriptionInput = { ...before, ...fields };
      const resuming = enabled === true && !row.enabled;
      const pausing = enabled === false && row.enabled;
      if (resuming) {
        const allowance = plan.webhookEndpoints;
        const active = await this.subscriptions.count(tx, accountId, { enabledOnly: true, except: uuid });
        if (allowance !== null && active >= allowance) {
          return rpcError(
            409,
            conflict(`Cannot resume: ${endpointAllowanceMessage(plan)} and ${active} active; pause or delete another first`),
          );
        }
      }
      // A resumed endpoint skips what was observed while it was paused: a new boundary, as for a new URL.
      const newBoundary = resuming || changesActivation(before, after);
      if (pausing) await this.deliveries.cancelPending(tx, uuid);
      const updated = await this.subscriptions.update(tx, uuid, { ...after, enabled: enabled ?? row.enabled }, newBoundary);
      return rpcOk({ data: toSubscription(updated) });
    }, checkBody);
  }

  async delete(accountId: string, id: string): Reply<'Delete'> {
    return this.endpoints.change(accountId, id, null, async ({ tx, uuid }) => {
      if (await this.deliveries.anySending(tx, uuid)) {
        return rpcError(
          409,
          conflict(
            `A delivery attempt to this endpoint is in flight; delete it once the attempt ends (at most 10 s): retry after ${DELETE_RETRY_AFTER_SECONDS} s`,
          ),
          { retryAfterSeconds: DELETE_RETRY_AFTER_SECONDS },
        );
      }
      await this.subscriptions.delete(tx, uuid);
      return rpcOk({ deleted: true as const });
    });
  }

  /** Queues a `webhook.test` event as a pending delivery, due now; free of charge. */
  async sendTest(accountId: string, id: string): Reply<'SendTest'> {
    return this.endpoints.change(accountId, id, { feature: Features.Test }, async ({ tx, uuid, endpoint }) => {
      if (!endpoint.enabled) return rpcError(409, conflict('The webhook is paused; resume it (PATCH enabled: true) to send a test'));
      const marked = await this.subscriptions.markTested(tx, uuid, TEST_COOLDOWN_SECONDS);
      if (!marked.ok) {
        return rpcError(
          409,
          conflict(`One test per endpoint per minute: the next test can be sent in ${marked.waitSeconds} s`),
          { retryAfterSeconds: marked.waitSeconds },
        );
      }
      const envelope = buildEventEnvelope(EventTypes.WebhookTest, { message: WEBHOOK_TEST_MESSAGE }, marked.at, newEventId());
      const delivery = await this.deliveries.insertDue(tx, {
        subscriptionId: uuid,
        accountId,
        eventId: envelope.id,
        eventType: envelope.type,
        payload: JSON.stringify(envelope),
      });
      return rpcOk({ data: toDelivery(delivery) as WebhookDelivery });
    });
  }

  /** A new secret, returned once; the previous one keeps signing for 24 h (replacing any kept before). */
  async rotateSecret(accountId: string, id: string): Reply<'RotateSecret'> {
    const { secret, sealed } = this.secrets.issue();
    return this.endpoints.change(accountId, id, { feature: Features.Rotate }, async ({ tx, uuid }) => {
      await this.subscriptions.rotateSecret(tx, uuid, sealed, ROTATION_OVERLAP_HOURS);
      return rpcOk({ data: { secret } });
    });
  }
}
