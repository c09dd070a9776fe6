import { percentile } from '../common/latency';

/**
 * The moments one observation passed through on its way to the receiver, all in ms on one clock
 * (this process's epoch clock: `performance.timeOrigin + performance.now()`; the database's
 * timestamps converted with the measured offset, see `DatabaseClock`).
 */
export interface Journey {
  /** Just before the observation was handed to the broker. */
  published: number;
  /** `events.created_at`: the change-detector's batch transaction started (its `now()`). */
  applied: number;
  /** That transaction began to commit (the bench's deferred trigger). */
  committed: number | null;
  /** `events.published_at`: the relay's transaction that published it to `auction.events` (its `now()`). */
  relayed: number | null;
  /** `webhook_deliveries.created_at`: the fan-out transaction that made its delivery (its `now()`). */
  fannedOut: number;
  /** That transaction began to commit (the bench's deferred trigger). */
  fanOutCommitted: number | null;
  /** The lease statement of the claim that took the delivery (`clock_timestamp()` at its end). */
  claimed: number | null;
  /** The receiver had the request's headers. */
  firstByte: number;
}

/** A stage: its name and how long each journey spent in it (ms), journeys lacking a stamp left out. */
export interface Stage {
  name: string;
  ms: number[];
}

/**
 * The stages the brief of the bench names, in the order of the pipeline. The relay is a branch
 * beside the delivery path (the fan-out is woken at the events' commit by `delivery_wakeup`, and by
 * `delivery.events` once relayed — whichever comes first), so "relayed → claimed" is negative when
 * the claim came first; the critical path (`criticalPath`) adds up to the whole.
 */
export function pipelineStages(journeys: readonly Journey[]): Stage[] {
  const stage = (name: string, from: (j: Journey) => number | null, to: (j: Journey) => number | null): Stage => ({
    name,
    ms: journeys.flatMap((j) => {
      const a = from(j);
      const b = to(j);
      return a === null || b === null ? [] : [b - a];
    }),
  });
  return [
    stage('queued for the change-detector (publish → event row)', (j) => j.published, (j) => j.applied),
    stage('applied → relayed (events.published_at)', (j) => j.applied, (j) => j.relayed),
    stage('relayed → claimed (lease)', (j) => j.relayed, (j) => j.claimed),
    stage('claimed → first byte', (j) => j.claimed, (j) => j.firstByte),
  ];
}

/** The delivery path stage by stage: each journey's stages add up to publish → first byte (journeys with every stamp). */
export function criticalPath(journeys: readonly Journey[]): Stage[] {
  const complete = journeys.filter((j) => j.committed !== null && j.fanOutCommitted !== null && j.claimed !== null);
  const stage = (name: string, from: (j: Journey) => number, to: (j: Journey) => number): Stage => ({
    name,
    ms: complete.map((j) => to(j) - from(j)),
  });
  return [
    stage('publish → batch transaction starts (queue, consumer batch window)', (j) => j.published, (j) => j.applied),
    stage('batch transaction → its commit (change-detector applies the batch)', (j) => j.applied, (j) => j.committed!),
    stage('commit → fan-out transaction starts (WAL flush, wake-up, pass)', (j) => j.committed!, (j) => j.fannedOut),
    stage('fan-out transaction → its commit', (j) => j.fannedOut, (j) => j.fanOutCommitted!),
    stage('fan-out commit → claimed (wake-up, claim transaction)', (j) => j.fanOutCommitted!, (j) => j.claimed!),
    stage('claimed → first byte (claim commit, sign, send)', (j) => j.claimed!, (j) => j.firstByte),
  ];
}

export interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export function summarizeMs(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length === 0 ? NaN : sorted[sorted.length - 1],
  };
}

/** Upper bounds (ms, exclusive) of the histogram's buckets; the last bucket is open. */
export const BUCKETS_MS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000] as const;

function label(ms: number): string {
  return ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`;
}

/**
 * A text histogram of `samples` (ms): one line per bucket from the first to the last non-empty
 * one, a bar scaled to the fullest bucket (`width` characters), the count and its share.
 */
export function histogram(samples: readonly number[], width = 40): string[] {
  const counts = new Array<number>(BUCKETS_MS.length + 1).fill(0);
  for (const ms of samples) {
    const i = BUCKETS_MS.findIndex((upper) => ms < upper);
    counts[i === -1 ? BUCKETS_MS.length : i] += 1;
  }
  const first = counts.findIndex((c) => c > 0);
  if (first === -1) return [];
  const last = counts.length - 1 - [...counts].reverse().findIndex((c) => c > 0);
  const fullest = Math.max(...counts);
  const lines: string[] = [];
  for (let i = first; i <= last; i += 1) {
    const name = i === BUCKETS_MS.length ? `≥ ${label(BUCKETS_MS[i - 1])}` : `< ${label(BUCKETS_MS[i])}`;
    const bar = '#'.repeat(counts[i] === 0 ? 0 : Math.max(1, Math.round((counts[i] / fullest) * width)));
    const share = ((counts[i] / samples.length) * 100).toFixed(1);
    lines.push(`${name.padStart(9)} | ${bar.padEnd(width)} ${String(counts[i]).padStart(6)} (${share.padStart(5)} %)`);
  }
  return lines;
}
