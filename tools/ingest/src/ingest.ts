import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { parseArgs as parseCliArgs } from 'node:util';
import { ObservationHeaders, Queues } from '@cars/contracts';
import { assertObservationTopology, connectToAny } from '@cars/messaging';
import { Client } from 'pg';
import { Progress } from './progress';

export interface IngestOptions {
  file: string;
  /** Observations per second at most (unlimited when absent). */
  rate?: number;
  /** Wait until every published observation is applied, pending or rejected, and report those counts. */
  wait?: boolean;
  /** How long `wait` waits at most (seconds). */
  waitTimeoutSeconds?: number;
  /** Send even when the database already holds some of the file's auctions (they are updated). */
  allowRewrite?: boolean;
}

/** What became of a run's observations (`--wait`). */
export interface IngestOutcomeCounts {
  applied: number;
  pending: number;
  rejected: number;
}

export function parseArgs(argv: string[]): IngestOptions {
  const { values, positionals } = parseCliArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: { rate: { type: 'string' }, wait: { type: 'boolean' }, 'wait-timeout': { type: 'string' }, 'allow-rewrite': { type: 'boolean' } },
  });
  const options: IngestOptions = { file: '' };
  if (values.rate !== undefined) {
    options.rate = Number(values.rate);
    if (!Number.isFinite(options.rate) || options.rate <= 0) throw new Error('--rate must be a positive number (observations per second)');
  }
  if (values.wait) options.wait = true;
  if (values['allow-rewrite']) options.allowRewrite = true;
  if (values['wait-timeout'] !== undefined) {
    options.waitTimeoutSeconds = Number(values['wait-timeout']);
    if (!Number.isFinite(options.waitTimeoutSeconds) || options.waitTimeoutSeconds <= 0) {
      throw new Error('--wait-timeout must be a positive number of seconds');
    }
  }
  if (positionals.length > 1) throw new Error(`unexpected argument "${positionals[1]}"`);
  if (!positionals[0]) throw new Error('FILE is required');
  options.file = positionals[0];
  return options;
}

/** Sleeps as needed so that `sent` observations take at least `sent / rate` seconds. */
export class RateLimiter {
  private readonly started = Date.now();
  constructor(private readonly rate?: number) {}

  async wait(sent: number): Promise<void> {
    if (!this.rate) return;
    const due = this.started + (sent / this.rate) * 1000;
    const delay = due - Date.now();
    if (delay >= 2) await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

const WINDOW = 2000;

/** Publishes each non-blank line to `observations` with publisher confirms. */
export async function ingestToRabbit(
  url: string,
  lines: AsyncIterable<string>,
  options: IngestOptions,
  progress: Progress,
): Promise<{ published: number; skipped_blank: number; seconds: number; run_id?: string }> {
  const started = Date.now();
  // With --wait every message names its run and itself, so the consumer records its outcome.
  const runId = options.wait ? randomUUID() : undefined;
  const connection = await connectToAny(url, { noDelay: true });
  let failure: Error | undefined;
  connection.on('error', (error: Error) => (failure ??= error));
  try {
    const channel = await connection.createConfirmChannel();
    channel.on('error', (error: Error) => (failure ??= error));
    await assertObservationTopology(channel);
    const limiter = new RateLimiter(options.rate);
    let published = 0;
    let blank = 0;
    let outstanding = 0;
    let confirmedTotal = 0;
    for await (const line of lines) {
      if (failure) throw failure;
      if (line.trim() === '') {
        blank += 1;
        continue;
      }
      const ok = channel.sendToQueue(
        Queues.Observations,
        Buffer.from(line, 'utf8'),
        runId
          ? {
              persistent: true,
              contentType: 'application/json',
              messageId: `${runId}:${published + 1}`,
              headers: { [ObservationHeaders.IngestRun]: runId },
            }
          : { persistent: true, contentType: 'application/json' },
        (error) => {
          if (error) failure ??= new Error(`the broker refused a message: ${String(error)}`);
          else {
            confirmedTotal += 1;
            progress.tick();
          }
        },
      );
      published += 1;
      outstanding += 1;
      if (!ok) await new Promise((resolve) => channel.once('drain', resolve));
      if (outstanding >= WINDOW) {
        await channel.waitForConfirms();
        outstanding = 0;
      }
      await limiter.wait(published);
    }
    await channel.waitForConfirms();
    if (failure) throw failure;
    if (confirmedTotal !== published) throw new Error(`only ${confirmedTotal} of ${published} messages were confirmed`);
    await channel.close();
    return { published, skipped_blank: blank, seconds: (Date.now() - started) / 1000, ...(runId ? { run_id: runId } : {}) };
  } finally {
    await connection.close().catch(() => undefined);
  }
}

const HTTP_BATCH = 500;

/** Sends the lines as NDJSON POSTs to the quick start's loopback ingestion endpoint. */
export async function ingestToHttp(
  endpoint: string,
  lines: AsyncIterable<string>,
  options: IngestOptions,
  progress: Progress,
): Promise<{ sent: number; accepted: number; rejected: number; pending: number; seconds: number }> {
  const started = Date.now();
  const limiter = new RateLimiter(options.rate);
  let batch: string[] = [];
  let sent = 0;
  let accepted = 0;
  let rejected = 0;
  let pending = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const reply = await postNdjson(endpoint, `${batch.join('\n')}\n`);
    accepted += typeof reply.accepted === 'number' ? reply.accepted : batch.length;
    pending += typeof reply.pending === 'number' ? reply.pending : 0;
    rejected += typeof reply.rejected === 'number' ? reply.rejected : Array.isArray(reply.rejected) ? reply.rejected.length : 0;
    progress.tick(batch.length);
    batch = [];
  };
  for await (const line of lines) {
    if (line.trim() === '') continue;
    batch.push(line);
    sent += 1;
    const size = options.rate ? Math.max(1, Math.min(HTTP_BATCH, Math.floor(options.rate / 10))) : HTTP_BATCH;
    if (batch.length >= size) {
      await flush();
      await limiter.wait(sent);
    }
  }
  await flush();
  return { sent, accepted, rejected, pending, seconds: (Date.now() - started) / 1000 };
}

function postNdjson(endpoint: string, body: string): Promise<{ accepted?: unknown; rejected?: unknown; pending?: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(
      endpoint,
      { method: 'POST', headers: { 'content-type': 'application/x-ndjson', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (!res.statusCode || res.statusCode < 200 || res.statusCode >= 300) {
            reject(new Error(`the ingestion endpoint answered ${res.statusCode ?? '?'}: ${text.slice(0, 500)}`));
            return;
          }
          try {
            resolve(text ? (JSON.parse(text) as { accepted?: unknown; rejected?: unknown; pending?: unknown }) : {});
          } catch {
            resolve({});
          }
        });
        res.on('error', reject);
      },
    );
    req.on('error', (error) => reject(new Error(`cannot reach the ingestion endpoint ${endpoint}: ${error.message}`)));
    req.end(body);
  });
}

/**
 * `--wait` over RabbitMQ: polls the outcomes the change-detector records for the run until all
 * `published` observations are accounted for, or the timeout passes (then the counts so far, with
 * `waiting` = those not processed yet).
 */
export async function waitForOutcomes(
  databaseUrl: string,
  runId: string,
  published: number,
  timeoutSeconds: number,
): Promise<IngestOutcomeCounts & { waiting: number; waited_seconds: number }> {
  const started = Date.now();
  const client = new Client({ connectionString: databaseUrl, application_name: 'ingest-wait' });
  await client.connect();
  try {
    for (;;) {
      const { rows } = await client.query<{ outcome: keyof IngestOutcomeCounts; n: number }>(
        `SELECT outcome, count(*)::int AS n FROM ingest_outcomes WHERE run_id = $1 GROUP BY outcome`,
        [runId],
      );
      const counts: IngestOutcomeCounts = { applied: 0, pending: 0, rejected: 0 };
      for (const row of rows) counts[row.outcome] = row.n;
      const done = counts.applied + counts.pending + counts.rejected;
      const waited = (Date.now() - started) / 1000;
      if (done >= published || waited >= timeoutSeconds) {
        return { ...counts, waiting: Math.max(0, published - done), waited_seconds: waited };
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}
