import 'reflect-metadata';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { readLocalInstance } from '@cars/runtime';
import { IngestOptions, ingestToHttp, ingestToRabbit, parseArgs, waitForOutcomes } from './ingest';
import { Progress } from './progress';
import { errorMessage } from '@cars/contracts';

/**
 * `npm run ingest -- FILE.ndjson [--rate N] [--wait]`: publishes each line of the file as one
 * observation (docs/api/ingestion.md). With RABBITMQ_URL: to the `observations` queue with
 * publisher confirms; `--wait` then waits until the change-detector has applied, parked or rejected
 * each one (read from DATABASE_URL) and prints those counts. Without it: to the running quick-start
 * instance's loopback ingestion endpoint. Progress on stderr; a JSON summary on stdout; non-zero
 * exit with a message on error.
 */
async function main(argv: string[]): Promise<number> {
  let options: IngestOptions;
  try {
    options = parseArgs(argv);
  } catch (error) {
    console.error(`ingest: ${errorMessage(error)}`);
    console.error('usage: npm run ingest -- FILE.ndjson [--rate N] [--wait [--wait-timeout SECONDS]]');
    return 2;
  }
  try {
    await stat(options.file);
    const total = await countLines(options.file);
    const progress = new Progress(total);
    const lines = readLines(options.file);
    const url = process.env.RABBITMQ_URL;
    let summary: Record<string, unknown>;
    if (url) {
      const databaseUrl = process.env.DATABASE_URL;
      if (options.wait && !databaseUrl) throw new Error('--wait needs DATABASE_URL too: the outcomes are read from the database');
      const published = await ingestToRabbit(url, lines, options, progress);
      progress.finish();
      summary = published;
      if (options.wait && published.run_id) {
        process.stderr.write('waiting for the change-detector to apply them…\n');
        summary = { ...published, ...(await waitForOutcomes(databaseUrl!, published.run_id, published.published, options.waitTimeoutSeconds ?? 600)) };
      }
    } else {
      const instance = readLocalInstance();
      if (!instance?.ingestUrl) {
        throw new Error('Set RABBITMQ_URL, or start the quick-start instance first (npm start).');
      }
      // The quick start applies each batch before it answers: the counts are final already.
      const sent = await ingestToHttp(instance.ingestUrl, lines, options, progress);
      progress.finish();
      summary = options.wait ? { ...sent, applied: sent.accepted - sent.pending } : sent;
    }
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    if (typeof summary.waiting === 'number' && summary.waiting > 0) {
      console.error(`ingest: ${summary.waiting} observations were not processed within the wait timeout`);
      return 3;
    }
    return 0;
  } catch (error) {
    console.error(`\ningest: ${errorMessage(error)}`);
    return 1;
  }
}

/** Lines of the file; the reader opens on first iteration (a readline interface left unread loses lines). */
async function* readLines(file: string): AsyncGenerator<string> {
  const reader = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  for await (const line of reader) yield line;
}

/** Non-blank lines of the file (what will be published), for the ETA. */
async function countLines(file: string): Promise<number> {
  let count = 0;
  let content = false;
  for await (const chunk of createReadStream(file)) {
    for (const byte of chunk as Buffer) {
      if (byte === 10) {
        if (content) count += 1;
        content = false;
      } else if (byte !== 13 && byte !== 32 && byte !== 9) {
        content = true;
      }
    }
  }
  return content ? count + 1 : count;
}

void main(process.argv.slice(2)).then((code) => process.exit(code));
