/** The wire shapes of the `/account` routes the console uses (snake_case, as the API sends them). */

export type PlanId = 'free' | '1k' | '10k' | '100k';

export interface Account {
  id: string;
  email: string;
  email_verified: boolean;
  plan: PlanId;
  plan_expires_at: string | null;
  created_at: string;
}

export interface SessionBody {
  account: Account;
  csrf_token: string;
}

export interface Usage {
  used: number;
  allowance: number;
  requests: number;
  deliveries: number;
  resets_at: string;
  reserved?: number;
  remaining?: number;
}

export interface PlanSummary {
  id: PlanId;
  name?: string;
  monthly_allowance?: number;
  paid?: boolean;
  /** Null: unlimited. */
  webhook_endpoints?: number | null;
  /** The account's paid plan has lapsed: it is on Free. */
  expired?: boolean;
}

export interface Overview {
  account: Account;
  /** The plan in force now (a lapsed paid plan is Free). */
  plan?: PlanSummary | null;
  billing_period: { start: string; end: string };
  usage: Usage;
}

export interface ApiKey {
  id: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface CreatedKey {
  key: ApiKey;
  api_key: string;
}

export const EVENT_TYPES = ['auction.created', 'auction.updated', 'auction.ended', 'bid.created'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface WebhookFilters {
  auction_id?: string;
  make?: string;
  source?: string;
}

export interface WebhookHealth {
  consecutive_failures: number;
  last_success_at: string | null;
  last_failure_at: string | null;
  pending_deliveries: number;
  oldest_pending_at: string | null;
  /** `open`: backed off after failing in a row, its deliveries wait until `circuit_retry_at`; `half_open`: one probe in flight. */
  circuit?: 'closed' | 'open' | 'half_open';
  circuit_retry_at?: string | null;
}

export interface Webhook {
  id: string;
  url: string;
  description: string;
  event_types: EventType[];
  filters: WebhookFilters;
  enabled: boolean;
  created_at: string;
  updated_at: string;
  health?: WebhookHealth;
}

export interface WebhookInput {
  url?: string;
  description?: string;
  event_types?: EventType[];
  filters?: WebhookFilters;
  enabled?: boolean;
}

export type DeliveryStatus = 'pending' | 'sending' | 'succeeded' | 'failed' | 'canceled';

export interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  waiting_reason: 'allowance' | 'make' | null;
  attempts: number;
  max_attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_response_status: number | null;
  last_error: string | null;
  last_response_excerpt: string | null;
  last_duration_ms: number | null;
  created_at: string;
  updated_at: string;
  payload: unknown;
}

export interface TrendPoint {
  date: string;
  avg_price: number;
  volume: number;
}

export interface Stats {
  currency: string;
  total_sales: number;
  average_price: number;
  median_price: number;
  lowest_price: number;
  highest_price: number;
  sell_through_rate: number;
  price_trend: TrendPoint[];
}

/** The error envelope of every 4xx/5xx. */
export interface ErrorBody {
  error: string;
  message: string;
  details?: Record<string, string[]>;
}
