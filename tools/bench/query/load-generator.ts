import { Pool } from 'undici';

/** One request of the mix. */
export interface BenchRequest {
  /** Request class (what is reported). */
  name: string;
  path: string;
}

export interface ClassStats {
  name: string;
  count: number;
  errors: number;
  p50: number;
  p99: number;
  max: number;
  /** Completed requests per second of this class. */
  throughput: number;
}

export interface RunResult {
  seconds: number;
  total: number;
  errors: number;
  throughput: number;
  classes: ClassStats[];
  /** First few unexpected answers, for the report. */
  failures: string[];
}

interface Sample {
  name: string;
  ms: number;
  ok: boolean;
}

/** Samples of one or more slices of a run, summarized together. */
export class Recorder {
  readonly samples: Sample[] = [];
  readonly failures: string[] = [];
  seconds = 0;

  constructor(private readonly order: string[]) {}

  add(name: string, ms: number, ok: boolean, failure?: string): void {
    this.samples.push({ name, ms, ok });
    if (!ok && failure && this.failures.length < 5) this.failures.push(failure);
  }

  result(): RunResult {
    return summarize(this.samples, this.seconds, this.order, this.failures);
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

function summarize(samples: Sample[], seconds: number, order: string[], failures: string[]): RunResult {
  const classes = order.map((name): ClassStats => {
    const mine = samples.filter((s) => s.name === name);
    const ms = mine.map((s) => s.ms).sort((a, b) => a - b);
    return {
      name,
      count: mine.length,
      errors: mine.filter((s) => !s.ok).length,
      p50: percentile(ms, 0.5),
      p99: percentile(ms, 0.99),
      max: ms[ms.length - 1] ?? 0,
      throughput: mine.length / seconds,
    };
  });
  const errors = samples.filter((s) => !s.ok).length;
  return { seconds, total: samples.length, errors, throughput: samples.length / seconds, classes, failures };
}

/** A 200 whose body carries an exact `meta.total` (or, for cursor pages, `meta.has_more`). */
function answered(status: number, body: string): boolean {
  return status === 200 && body.includes('"meta":{"total":');
}

/** API keys a client sends, one per request in turn (`createClient`). */
const clientKeys = new WeakMap<Pool, { keys: readonly string[]; next: number }>();

async function send(pool: Pool, path: string): Promise<{ status: number; body: string }> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const auth = clientKeys.get(pool);
  if (auth) headers.authorization = `Bearer ${auth.keys[auth.next++ % auth.keys.length]}`;
  const res = await pool.request({ method: 'GET', path, headers });
  return { status: res.statusCode, body: await res.body.text() };
}

/** A client of the server at `baseUrl`; with `apiKeys`, each request authenticates with the next key in turn. */
export function createClient(baseUrl: string, connections = 64, apiKeys: readonly string[] = []): Pool {
  const pool = new Pool(baseUrl, { connections, pipelining: 1, keepAliveTimeout: 60_000 });
  if (apiKeys.length > 0) clientKeys.set(pool, { keys: apiKeys, next: 0 });
  return pool;
}

/**
 * Open loop: request i is due at start + i / rate, whatever the previous ones are doing, and its
 * latency counts from when it was due (no coordinated omission: a stall shows up in the
 * percentiles instead of slowing the load down). Classes are interleaved round-robin; `first` is
 * the index in the mix to start from (slices of one run continue the mix).
 */
export async function openLoop(
  pool: Pool,
  mix: BenchRequest[],
  rate: number,
  seconds: number,
  recorder: Recorder,
  first = 0,
): Promise<number> {
  const total = Math.round(rate * seconds);
  const interval = 1000 / rate;
  const start = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i += 1) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const request = mix[(first + i) % mix.length];
    inFlight.push(
      send(pool, request.path).then(
        ({ status, body }) => {
          const ok = answered(status, body);
          recorder.add(request.name, performance.now() - due, ok, `${request.path} → ${status} ${body.slice(0, 200)}`);
        },
        (error: unknown) => recorder.add(request.name, performance.now() - due, false, `${request.path} → ${String(error)}`),
      ),
    );
  }
  await Promise.all(inFlight);
  recorder.seconds += (performance.now() - start) / 1000;
  return first + total;
}

/** Closed loop: `concurrency` callers each sending the next request of the mix as soon as the last returns. */
export async function closedLoop(
  pool: Pool,
  mix: BenchRequest[],
  concurrency: number,
  seconds: number,
  recorder: Recorder,
  first = 0,
): Promise<number> {
  const start = performance.now();
  const end = start + seconds * 1000;
  let next = first;
  const worker = async () => {
    while (performance.now() < end) {
      const request = mix[next % mix.length];
      next += 1;
      const sent = performance.now();
      try {
        const { status, body } = await send(pool, request.path);
        recorder.add(request.name, performance.now() - sent, answered(status, body), `${request.path} → ${status} ${body.slice(0, 200)}`);
      } catch (error) {
        recorder.add(request.name, performance.now() - sent, false, `${request.path} → ${String(error)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  recorder.seconds += (performance.now() - start) / 1000;
  return next;
}
