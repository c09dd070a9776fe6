import { Resolver } from '@cars/net-guard';

/** What the webhooks service is configured with (read from the environment by its host app). */
export interface WebhooksOptions {
  /** WEBHOOK_SECRET_KEY: comma-separated base64 master keys; the first encrypts, all decrypt. */
  secretKeys: string;
  /** WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: local receivers (tests, local demo). Never in production. */
  allowPrivateDestinations?: boolean;
  /** How destination names are resolved at create/patch time (tests inject one). Default: the system's. */
  resolver?: Resolver;
  /** How often endpoints beyond the allowance of a lapsed plan are paused (default 30 s). */
  planSweepIntervalMs?: number;
}

export const WEBHOOKS_OPTIONS = Symbol('WEBHOOKS_OPTIONS');

export const DEFAULT_PLAN_SWEEP_INTERVAL_MS = 30_000;
