import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { ageSeconds, counter, gauge, histogram, LATENCY_BUCKETS } from '@cars/metrics';
import { PG_POOL } from '@cars/persistence';
import { Pool } from 'pg';
import type { AttemptOutcome } from '../dispatch/attempt-outcome';
import { CIRCUIT_STATES } from '../dispatch/circuit';

/** Attempts by outcome (`succeeded`, `failed`) and error code (`none` on success): what receivers answered. */
export const deliveryAttempts = counter({
  name: 'webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts, by outcome (succeeded, failed) and error code (none, timeout, connect_error, http_status, …).',
  labelNames: ['outcome', 'error'] as const,
});

export const attemptDuration = histogram({
  name: 'webhook_delivery_attempt_duration_seconds',
  help: 'Duration of one delivery attempt, connect to last byte, by outcome.',
  labelNames: ['outcome'] as const,
  buckets: LATENCY_BUCKETS,
});

/** Attempts whose worker died (lease expired) and were counted as failed `interrupted` by a sweep. */
export const interruptedAttempts = counter({
  name: 'webhook_delivery_attempts_interrupted_total',
  help: 'Attempts whose lease expired (their worker stopped mid-attempt), returned to the schedule by a sweep.',
});

/** Endpoint circuits opened (or reopened after a failed probe): endpoints backed off as a whole. */
export const circuitOpens = counter({
  name: 'webhook_endpoint_circuit_opens_total',
  help: 'Endpoint circuits opened after failed attempts in a row, or reopened after a failed probe.',
});

/** The series an attempt counts in, found once per label set (prom-client hashes the labels on every call otherwise). */
const attemptSeries = new Map<string, { count: { inc(): void }; duration: { observe(seconds: number): void } }>();

export function countAttempt(outcome: AttemptOutcome): void {
  const label = outcome.succeeded ? 'succeeded' : 'failed';
  const error = outcome.error ?? 'none';
  const key = `${label}|${error}`;
  let series = attemptSeries.get(key);
  if (!series) {
    series = { count: deliveryAttempts.labels(label, error), duration: attemptDuration.labels(label) };
    attemptSeries.set(key, series);
  }
  series.count.inc();
  series.duration.observe(outcome.durationMs / 1000);
}

/** Reads the backlog once per scrape for both gauges (prom-client collects them concurrently). */
let readBacklog: (() => Promise<void>) | undefined;
let reading: Promise<void> | undefined;
const collectBacklog = async (): Promise<void> => {
  if (!readBacklog) return;
  // A database that cannot answer keeps the last figures; readiness reports the database itself.
  reading ??= readBacklog()
    .catch(() => undefined)
    .finally(() => (reading = undefined));
  await reading;
};

const waiting = gauge({
  name: 'webhook_deliveries_waiting',
  help: 'Pending deliveries by what they wait for: due (their attempt is due now), scheduled (a later retry), allowance, make.',
  labelNames: ['reason'] as const,
  collect: collectBacklog,
});

const oldestPending = gauge({
  name: 'webhook_oldest_pending_delivery_age_seconds',
  help: 'Age of the oldest pending delivery (0 when none): how far behind the endpoints are.',
  collect: collectBacklog,
});

const circuits = gauge({
  name: 'webhook_endpoint_circuits',
  help: 'Enabled endpoints by circuit state: closed, open (backed off, its deliveries wait), half_open (one probe in flight).',
  labelNames: ['state'] as const,
  collect: collectBacklog,
});

/**
 * The backlog gauges are read from the delivery rows when Prometheus scrapes (one index-backed
 * query), so every replica reports the same truth and nothing drifts between scrapes.
 */
@Injectable()
export class DeliveryBacklogMetrics implements OnModuleInit {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  onModuleInit(): void {
    // The gauges are process-wide; the last delivery module started in this process reports.
    readBacklog = () => this.read();
  }

  private async read(): Promise<void> {
    const { rows } = await this.pool.query<{ reason: string; n: number; oldest: Date | null; now: Date }>(
      `SELECT CASE WHEN waiting_reason IS NOT NULL THEN waiting_reason
                   WHEN next_attempt_at <= now() THEN 'due' ELSE 'scheduled' END AS reason,
              count(*)::int AS n, min(created_at) AS oldest, now() AS now
         FROM webhook_deliveries WHERE status = 'pending' GROUP BY 1`,
    );
    waiting.reset();
    for (const reason of ['due', 'scheduled', 'allowance', 'make']) waiting.set({ reason }, 0);
    let oldest: Date | null = null;
    let now = new Date();
    for (const row of rows) {
      waiting.set({ reason: row.reason }, row.n);
      if (row.oldest && (!oldest || row.oldest < oldest)) oldest = row.oldest;
      now = row.now;
    }
    oldestPending.set(ageSeconds(oldest, now));
    const { rows: states } = await this.pool.query<{ state: string; n: number }>(
      `SELECT circuit_state AS state, count(*)::int AS n FROM webhook_subscriptions WHERE enabled GROUP BY 1`,
    );
    circuits.reset();
    for (const state of CIRCUIT_STATES) circuits.set({ state }, 0);
    for (const row of states) circuits.set({ state: row.state }, row.n);
  }
}
