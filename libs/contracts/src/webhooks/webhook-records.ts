import { SubscribableEventType } from '../events/event-envelope';

/**
 * The public records of the webhook half (subscriptions and delivery records,
 * docs/api/webhooks.md): what the API returns. Built from rows by the services, never from a table
 * type, so a secret, capture metadata or routing context can never leak into a body.
 */

export const WEBHOOK_ID_PREFIX = 'whe_';
export const DELIVERY_ID_PREFIX = 'whd_';
export const SIGNING_SECRET_PREFIX = 'whsec_';

/** Filters of a subscription, combined with AND; an omitted key accepts all. */
export interface WebhookFilters {
  /** A positive integer, as a string. */
  auction_id?: string;
  /** Canonical make name, compared case-insensitively. */
  make?: string;
  /** Platform identifier, compared case-insensitively. */
  source?: string;
}

export interface WebhookSubscription {
  /** `whe_` + UUID. */
  id: string;
  url: string;
  description: string;
  event_types: SubscribableEventType[];
  filters: WebhookFilters;
  /** False means paused. */
  enabled: boolean;
  created_at: string;
  updated_at: string;
  /** Additive: whether the endpoint is failing or backed up, without reading every delivery. */
  health: WebhookHealth;
}

export interface WebhookHealth {
  /** Failed attempts since the last successful one. */
  consecutive_failures: number;
  last_success_at: string | null;
  last_failure_at: string | null;
  /** Deliveries `pending` or `sending`. */
  pending_deliveries: number;
  oldest_pending_at: string | null;
  /**
   * The endpoint's circuit: `closed` (delivering), `open` (it kept failing: its deliveries wait,
   * using no attempt, until `circuit_retry_at`), `half_open` (one probe attempt in flight).
   */
  circuit: WebhookCircuitState;
  /** While `open`: when the probe attempt is due. Null otherwise. */
  circuit_retry_at: string | null;
  /** When the circuit opened (it stays set while it reopens after failed probes); null when `closed`. */
  circuit_opened_at: string | null;
}

export const WEBHOOK_CIRCUIT_STATES = ['closed', 'open', 'half_open'] as const;
export type WebhookCircuitState = (typeof WEBHOOK_CIRCUIT_STATES)[number];

export const DELIVERY_STATUSES = ['pending', 'sending', 'succeeded', 'failed', 'canceled'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Why a `pending` delivery is not being attempted: an exhausted allowance, or make maintenance. */
export const DELIVERY_WAITING_REASONS = ['allowance', 'make'] as const;
export type DeliveryWaitingReason = (typeof DELIVERY_WAITING_REASONS)[number];

/** `last_error` of a failed attempt: a short, stable code. */
export const DELIVERY_ERROR_CODES = [
  'timeout',
  'connect_error',
  'dns_error',
  'tls_error',
  'redirect',
  'http_status',
  'destination_blocked',
  'interrupted',
] as const;
export type DeliveryErrorCode = (typeof DELIVERY_ERROR_CODES)[number];

/** Attempts in one budget: the first, then retries after about 1 min, 5 min, 30 min, 2 h, 8 h. */
export const DELIVERY_MAX_ATTEMPTS = 6;

/** The bytes of a receiver's answer kept on the record. */
export const DELIVERY_RESPONSE_EXCERPT_BYTES = 4096;

export interface WebhookDelivery {
  /** `whd_` + UUID. */
  id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  waiting_reason: DeliveryWaitingReason | null;
  attempts: number;
  max_attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_response_status: number | null;
  last_error: DeliveryErrorCode | null;
  /** At most 4 KB of the receiver's body. */
  last_response_excerpt: string | null;
  last_duration_ms: number | null;
  created_at: string;
  updated_at: string;
  /** The public envelope exactly as it is or was sent. */
  payload: unknown;
}

/** `whe_<uuid>` → uuid, or null when the id is not of that form (a malformed id is a 404). */
export function parsePrefixedId(prefix: string, id: string): string | null {
  if (!id.startsWith(prefix)) return null;
  const uuid = id.slice(prefix.length);
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(uuid) ? uuid : null;
}
