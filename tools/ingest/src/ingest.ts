import { request } from 'node:http';
import { Queues } from '@cars/contracts';
import { assertObservationTopology } from '@cars/messaging';
import { connect } from 'amqplib';
import { Progress } from './progress';

export interface IngestOptions {
  file: string;
  /** Observations per second at most (unlimited when absent). */
  rate?: number;
}

export function parseArgs(argv: string[]): IngestOptions {
  let file: string | undefined;
  let rate: number | undefined;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--rate' || arg.startsWith('--rate=')) {
      const value = arg.includes('=') ? arg.slice('--rate='.length) : argv[(i += 1)];
      rate = Number(value);
      if (!Number.isFinite(rate) || rate <= 0) throw new Error('--rate must be a positive number (observations per second)');
    } else if (arg.startsWith('--')) {
      throw new Error(`unknown option ${arg}`);
    } else if (file === undefined) {
      file = arg;
    } else {
      throw new Error(`unexpected argument "${arg}"`);
    }
  }
  if (!file) throw new Error('FILE is required');
  return { file, rate };
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
): Promise<{ published: number; skipped_blank: number; seconds: number }> {
  const started = Date.now();
  const connection = await connect(url, { noDelay: true });
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
        { persistent: true, contentType: 'application/json' },
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
    return { published, skipped_blank: blank, seconds: (Date.now() - started) / 1000 };
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
): Promise<{ sent: number; accepted: number; rejected: number; seconds: number }> {
  const started = Date.now();
  const limiter = new RateLimiter(options.rate);
  let batch: string[] = [];
  let sent = 0;
  let accepted = 0;
  let rejected = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const reply = await postNdjson(endpoint, `${batch.join('\n')}\n`);
    accepted += typeof reply.accepted === 'number' ? reply.accepted : batch.length;
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
  return { sent, accepted, rejected, seconds: (Date.now() - started) / 1000 };
}

function postNdjson(endpoint: string, body: string): Promise<{ accepted?: unknown; rejected?: unknown }> {
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
            resolve(text ? (JSON.parse(text) as { accepted?: unknown; rejected?: unknown }) : {});
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
