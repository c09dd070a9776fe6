import { DELIVERY_ID_PREFIX, WebhookDelivery } from '@cars/contracts';
import { DeliveryRow } from '@cars/webhook-store';

const iso = (value: Date | null): string | null => (value === null ? null : value.toISOString());

/** The public delivery record: no routing context, lease or account — the payload as sent. */
export function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: `${DELIVERY_ID_PREFIX}${row.id}`,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    waiting_reason: row.waiting_reason,
    attempts: row.attempts,
    max_attempts: row.max_attempts,
    next_attempt_at: iso(row.next_attempt_at),
    last_attempt_at: iso(row.last_attempt_at),
    last_response_status: row.last_response_status,
    last_error: row.last_error,
    last_response_excerpt: row.last_response_excerpt,
    last_duration_ms: row.last_duration_ms,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    payload: JSON.parse(row.payload) as unknown,
  };
}
