import 'reflect-metadata';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { readLocalInstance } from '@cars/runtime';
import { Client } from 'pg';
import { IngestOptions, ingestToHttp, ingestToRabbit, parseArgs, waitForOutcomes } from './ingest';
import { describeFile, existingAuctions, inspectFile, type FileSummary, type RewriteCheck } from './inspect';
import { Progress } from './progress';
import { errorMessage } from '@cars/contracts';

const USAGE = 'usage: npm run ingest -- FILE.ndjson [--rate N] [--wait [--wait-timeout SECONDS]] [--allow-rewrite]';

/**
 * Exit code when the file would rewrite auctions the database holds and --allow-rewrite is absent:
 * before sending, the CLI reads the whole file, prints what it holds and, with a database to ask
 * (DATABASE_URL or the quick-start instance's), counts the file's auctions that exist already.
 */
const EXIT_WOULD_REWRITE = 4;

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
    console.error(USAGE);
    return 2;
  }
  try {
    await stat(options.file);
    const { summary: held, rewrite } = await inspect(options.file);
    process.stderr.write(`ingest: ${options.file} holds ${describeFile(held)}\n`);
    if (rewrite && rewrite.existing > 0) {
      const which = `${rewrite.existing.toLocaleString('en-US')} of its ${held.auctions.toLocaleString('en-US')} auctions already exist (e.g. ${rewrite.examples.join(', ')})`;
      if (!options.allowRewrite) {
        console.error(
          `ingest: NOT SENT: ${which}; sending would overwrite them and notify their subscribers. ` +
            'Generate a data set of another seed or --namespace (npm run datagen), or pass --allow-rewrite if updating them is meant.',
        );
        return EXIT_WOULD_REWRITE;
      }
      console.error(`ingest: WARNING: ${which}; --allow-rewrite: they will be updated`);
    }
    const progress = new Progress(held.lines);
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
    process.stdout.write(`${JSON.stringify({ ...summary, file: fileReport(held, rewrite) })}\n`);
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

/**
 * What the file holds and, when a database can be asked, how many of its auctions exist already.
 * Without one (RABBITMQ_URL alone) the check is skipped with a notice: ingesting never needs it.
 */
async function inspect(file: string): Promise<{ summary: FileSummary; rewrite?: RewriteCheck }> {
  const databaseUrl = process.env.DATABASE_URL ?? readLocalInstance()?.databaseUrl;
  if (!databaseUrl) {
    process.stderr.write('ingest: no DATABASE_URL: not checked whether the file rewrites existing auctions\n');
    return inspectFile(file);
  }
  const client = new Client({ connectionString: databaseUrl, application_name: 'ingest-check', connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    process.stderr.write(`ingest: WARNING: cannot reach the database (${errorMessage(error)}): not checked whether the file rewrites existing auctions\n`);
    return inspectFile(file);
  }
  try {
    return await inspectFile(file, existingAuctions(client));
  } finally {
    await client.end().catch(() => undefined);
  }
}

function fileReport(summary: FileSummary, rewrite: RewriteCheck | undefined): Record<string, unknown> {
  return {
    lines: summary.lines,
    completed: summary.completed,
    live: summary.live,
    bid_only: summary.bidOnly,
    bids: summary.bids,
    unreadable: summary.unreadable,
    auctions: summary.auctions,
    existing_auctions: rewrite ? rewrite.existing : null,
  };
}

void main(process.argv.slice(2)).then((code) => process.exit(code));
