import {
  collectDefaultMetrics,
  Counter,
  CounterConfiguration,
  Gauge,
  GaugeConfiguration,
  Histogram,
  HistogramConfiguration,
  register,
} from 'prom-client';

/**
 * Prometheus metrics of a process, on prom-client's default registry. Each lib declares the
 * series of what it owns where it owns it (the gateway its HTTP requests, the consumer base its
 * messages, the delivery worker its attempts); an app serves them all at `/metrics`. The quick
 * start hosts every service in one process, and tests start several apps in one: a metric is
 * created once per name and shared after that.
 */
export function counter<L extends string>(config: CounterConfiguration<L>): Counter<L> {
  return (register.getSingleMetric(config.name) as Counter<L> | undefined) ?? new Counter(config);
}

export function gauge<L extends string>(config: GaugeConfiguration<L>): Gauge<L> {
  return (register.getSingleMetric(config.name) as Gauge<L> | undefined) ?? new Gauge(config);
}

export function histogram<L extends string>(config: HistogramConfiguration<L>): Histogram<L> {
  return (register.getSingleMetric(config.name) as Histogram<L> | undefined) ?? new Histogram(config);
}

/** Latency buckets (seconds) from 1 ms to 10 s: HTTP requests, RPC round trips, delivery attempts. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

let processMetrics = false;

/** The process's own series (CPU, memory, event loop lag, handles), once per process. */
export function collectProcessMetrics(): void {
  if (processMetrics) return;
  processMetrics = true;
  collectDefaultMetrics();
}

/** The exposition of every registered series, for `GET /metrics`. */
export async function renderMetrics(): Promise<{ contentType: string; body: string }> {
  return { contentType: register.contentType, body: await register.metrics() };
}

/**
 * Seconds between now and an instant, 0 when there is none: what "oldest … age" gauges report.
 * Dates come from the database clock, so the age is measured against it too (`ageSeconds(row.oldest, row.now)`).
 */
export function ageSeconds(oldest: Date | string | null, now: Date | string): number {
  if (oldest === null) return 0;
  return Math.max(0, (new Date(now).getTime() - new Date(oldest).getTime()) / 1000);
}
