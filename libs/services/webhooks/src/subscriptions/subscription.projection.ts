import { WEBHOOK_ID_PREFIX, WebhookSubscription } from '@cars/contracts';
import { SubscriptionRow } from '@cars/webhook-store';

/** The public record of a row: the contract's fields and `health` — never a secret, the account or the boundary. */
export function toSubscription(row: SubscriptionRow): WebhookSubscription {
  return {
    id: `${WEBHOOK_ID_PREFIX}${row.id}`,
    url: row.url,
    description: row.description,
    event_types: row.event_types,
    filters: { ...row.filters },
    enabled: row.enabled,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    health: {
      consecutive_failures: row.consecutive_failures,
      last_success_at: row.last_success_at?.toISOString() ?? null,
      last_failure_at: row.last_failure_at?.toISOString() ?? null,
      pending_deliveries: row.pending_deliveries,
      oldest_pending_at: row.oldest_pending_at?.toISOString() ?? null,
      circuit: row.circuit_state,
      circuit_retry_at: row.circuit_state === 'open' ? (row.circuit_open_until?.toISOString() ?? null) : null,
      circuit_opened_at: row.circuit_opened_at?.toISOString() ?? null,
    },
  };
}
