import { DELIVERY_MAX_ATTEMPTS, DeliveryStatus } from '@cars/contracts';

/** What the retry route may do with a delivery (docs/api/webhooks.md, "Deliveries and retry"). */
export type RetryDecision =
  | { ok: true; maxAttempts: number }
  | { ok: false; reason: string };

/**
 * `failed` gets a new budget of six; a `pending` delivery that already failed an attempt (waiting
 * for its next automatic retry) is sent now, also with a fresh budget. Anything else is a 409:
 * `succeeded`, `sending`, `canceled`, or `pending` without a failed attempt. The budget is counted
 * on top of the attempts already made, so `attempts` stays the true count.
 */
export function retryDecision(delivery: { status: DeliveryStatus; attempts: number }): RetryDecision {
  const fresh = { ok: true as const, maxAttempts: delivery.attempts + DELIVERY_MAX_ATTEMPTS };
  switch (delivery.status) {
    case 'failed':
      return fresh;
    case 'pending':
      return delivery.attempts > 0 ? fresh : { ok: false, reason: 'the delivery has not been attempted yet; it goes out by itself' };
    case 'succeeded':
      return { ok: false, reason: 'the delivery already succeeded' };
    case 'sending':
      return { ok: false, reason: 'an attempt of this delivery is in flight' };
    case 'canceled':
      return { ok: false, reason: 'the delivery was canceled (the endpoint was paused)' };
  }
}
