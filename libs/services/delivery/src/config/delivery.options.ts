import type { ConnectionOptions } from 'node:tls';
import { Resolver } from '@cars/net-guard';

/** How the delivery worker is configured (from the environment by its host app; tests scale the times). */
export interface DeliveryOptions {
  /** RabbitMQ: `delivery.events` wakes the fan-out. Without it, the database alone drives the worker (quick start). */
  rabbitmqUrl?: string;
  /** The database URL, for the LISTEN connection (wake-ups at commit). */
  databaseUrl: string;
  /** WEBHOOK_SECRET_KEY: the master keys that open the endpoints' signing secrets. */
  secretKeys: string;
  /** WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: tests and local receivers only. */
  allowPrivateDestinations?: boolean;
  /** Resolves destination names at connect time (tests inject one). Default: the system's. */
  resolver?: Resolver;
  /** TLS options for receivers (tests: the CA of a self-signed receiver). */
  tls?: ConnectionOptions;
  /** Delays after each failed attempt, ms (default: 1 min, 5 min, 30 min, 2 h, 8 h). */
  retryDelaysMs?: readonly number[];
  /** ± share of each delay drawn at random (default 0.1). */
  retryJitter?: number;
  /** Receiver timeout for a whole attempt, ms (default 10 s: receivers must answer within 10 seconds). */
  receiverTimeoutMs?: number;
  /**
   * How long a claimed attempt is leased before another worker may recover it, ms: at least the
   * receiver timeout × (LEASE_ROUNDS + 1) + 5 s (55 s with the 10 s timeout). A claimed delivery
   * still queued when its lease can no longer cover one attempt (`LEASE_MARGIN_MS` more than the
   * receiver timeout) goes back unsent.
   */
  leaseMs?: number;
  /**
   * Claims run ahead of sending by this many rounds per endpoint and per account (default 16):
   * what an endpoint may hold here is `perEndpointConcurrency` × this, what an account may hold
   * `accountConcurrency` × this, the process `concurrency` × this. Deeper claims mean fewer
   * transactions per delivery; an endpoint that fails, or slows until its queued deliveries'
   * leases run short, hands them back unsent.
   */
  prefetchRounds?: number;
  /** The backstop sweep: fan-out, due deliveries, expired leases, allowance waits (default 1 s). */
  sweepIntervalMs?: number;
  /** Attempts in flight per worker process (default 64). */
  concurrency?: number;
  /**
   * Attempts in flight per endpoint per worker process (default 10) while its last attempt
   * succeeded; an endpoint whose last attempt failed gets one at a time until one succeeds.
   */
  perEndpointConcurrency?: number;
  /**
   * Attempts in flight per account per worker process, all its endpoints together (default 16, a
   * quarter of the default `concurrency`): one account's slow or dead receivers cannot hold the
   * slots every other account's deliveries need.
   */
  accountConcurrency?: number;
  /** Failed attempts in a row that open an endpoint's circuit (default 5). */
  circuitFailures?: number;
  /** How long a circuit stays open before its probe, ms (default 30 s), doubled at each reopening… */
  circuitBackoffMs?: number;
  /** …up to this, ms (default 10 min). */
  circuitMaxBackoffMs?: number;
  /** Events fanned out per transaction (default 500). */
  fanOutBatchSize?: number;
  /** How often terminal deliveries and events older than 30 days are removed (default 1 h). */
  retentionIntervalMs?: number;
}

export const DELIVERY_OPTIONS = Symbol('DELIVERY_OPTIONS');

/** Rounds of receiver timeouts a lease covers beyond the attempt itself: see `leaseMs`. */
export const LEASE_ROUNDS = 4;

/** What a lease must still have left, beyond the receiver timeout, for a queued delivery's attempt to start. */
export const LEASE_MARGIN_MS = 5_000;

/** The retry schedule (docs/api/webhooks.md, "The schedule"): about 1 minute, 5 minutes, 30 minutes, 2 hours and 8 hours after each failure. */
export const RETRY_DELAYS_MS = [60_000, 300_000, 1_800_000, 7_200_000, 28_800_000] as const;

export interface ResolvedDeliveryOptions extends Required<Omit<DeliveryOptions, 'rabbitmqUrl' | 'resolver' | 'tls'>> {
  rabbitmqUrl?: string;
  resolver?: Resolver;
  tls?: ConnectionOptions;
}

export function resolveDeliveryOptions(options: DeliveryOptions): ResolvedDeliveryOptions {
  const receiverTimeoutMs = options.receiverTimeoutMs ?? 10_000;
  return {
    ...options,
    allowPrivateDestinations: options.allowPrivateDestinations ?? false,
    retryDelaysMs: options.retryDelaysMs ?? RETRY_DELAYS_MS,
    retryJitter: options.retryJitter ?? 0.1,
    receiverTimeoutMs,
    leaseMs: Math.max(options.leaseMs ?? 0, receiverTimeoutMs * (LEASE_ROUNDS + 1) + LEASE_MARGIN_MS),
    prefetchRounds: options.prefetchRounds ?? 16,
    sweepIntervalMs: options.sweepIntervalMs ?? 1_000,
    concurrency: options.concurrency ?? 64,
    perEndpointConcurrency: options.perEndpointConcurrency ?? 10,
    accountConcurrency: options.accountConcurrency ?? 16,
    circuitFailures: options.circuitFailures ?? 5,
    circuitBackoffMs: options.circuitBackoffMs ?? 30_000,
    circuitMaxBackoffMs: Math.max(options.circuitMaxBackoffMs ?? 600_000, options.circuitBackoffMs ?? 30_000),
    fanOutBatchSize: options.fanOutBatchSize ?? 500,
    retentionIntervalMs: options.retentionIntervalMs ?? 3_600_000,
  };
}
