import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { generateObservations } from '@cars/datagen';
import { createDataSource, runMigrations } from '@cars/persistence';
import { NormalizationService, ObservationProcessor, OutboxRelay, parseObservation } from '@cars/service-change-detector';
import { createDatabase, dropDatabase } from '@cars/testing';
import { Client, QueryConfig } from 'pg';
import { booleanFlag, commandLine, integerFlag, parseFlags, stringFlag } from '../common/args';
import type { Observation } from '@cars/contracts';

/**
 * Where the CPU of the change-detector's batch path goes, statement by statement:
 *
 *   npm run build && node dist/tools/bench/ingest/breakdown.js [--auctions 30000] [--batch-size 1000] [--rounds 2]
 *
 * Applies the ingest bench's data set (datagen, same seed) through the ObservationProcessor in
 * batches, one at a time, without RabbitMQ, and reports per observation:
 *
 * - this process's CPU for parsing (JSON.parse), validating (the compiled ajv schema), applying
 *   (planning, row building, event decisions, the pg client's encoding and decoding) and the
 *   outbox relay's claim and mark of the batch's events (run after each batch, publishing to no
 *   broker);
 * - the PostgreSQL backend's CPU for each statement, read from /proc/<backend>/schedstat (exact
 *   nanoseconds on the CPU, so other work on the machine does not inflate it) around each query.
 *
 * Each round starts from empty tables (TRUNCATE), like each pipeline run of the ingest bench.
 * The first round warms up (JIT, caches); the figures are the last round's.
 */

const NAME = 'cars_bench_ingest_breakdown';

interface Options {
  auctions: number;
  seed: string;
  batchSize: number;
  rounds: number;
  keep: boolean;
  /** SQL run after the migrations (experiments: an index option, a dropped trigger). */
  setup: string | undefined;
}

const USAGE = `Usage: node dist/tools/bench/ingest/breakdown.js [options]

  --auctions N       completed auctions of the data set, plus its live ones (default 30000)
  --seed S           data set seed (default "1")
  --batch-size N     observations per transaction (default 1000)
  --rounds N         passes over the data set, tables emptied in between; the last one counts (default 2)
  --setup SQL        run SQL after the migrations (to try a schema change)
  --keep             keep the database afterwards
  -h, --help         this text`;

function parseOptions(argv: readonly string[]): Options | 'help' {
  const flags = parseFlags(argv, {
    auctions: { type: 'string' },
    seed: { type: 'string' },
    'batch-size': { type: 'string' },
    rounds: { type: 'string' },
    keep: { type: 'boolean' },
    setup: { type: 'string' },
  });
  if (flags === 'help') return 'help';
  return {
    auctions: integerFlag(flags, 'auctions', 30000, 1),
    seed: stringFlag(flags, 'seed', '1'),
    batchSize: integerFlag(flags, 'batch-size', 1000, 1),
    rounds: integerFlag(flags, 'rounds', 2, 1),
    keep: booleanFlag(flags, 'keep'),
    setup: flags.setup === undefined ? undefined : stringFlag(flags, 'setup', ''),
  };
}

const log = (message: string) => process.stderr.write(`bench:ingest-breakdown ${message}\n`);

/** Nanoseconds the process `pid` has spent on a CPU (/proc/<pid>/schedstat, first field). */
function onCpuNs(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return 0;
  }
}

const cpuNs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) * 1000;
};

/** Backend CPU by statement label, accumulated. */
const statements = new Map<string, { ns: number; calls: number }>();
let recording = false;

/** The label of a query: its prepared statement name, the name in its leading `-- comment`, or its first words. */
function labelOf(config: unknown): string {
  const query = typeof config === 'string' ? { text: config } : (config as QueryConfig);
  if (query.name) return query.name;
  const text = query.text.trim();
  return /^-- (\w+)/.exec(text)?.[1] ?? text.split(/\s+/).slice(0, 3).join(' ');
}

/** Wraps pg's Client.query so every statement's backend CPU is read before and after it. */
function instrumentPg(): void {
  const original = Client.prototype.query as (this: Client, ...args: unknown[]) => unknown;
  Client.prototype.query = function (this: Client & { processID?: number }, ...args: unknown[]): unknown {
    const pid = this.processID;
    if (!recording || !pid || typeof args[args.length - 1] === 'function') return original.apply(this, args);
    const label = labelOf(args[0]);
    // COPYs (pg-copy-streams, or persistence's copyIn) carry their statement as `text`, like a query config.
    const before = onCpuNs(pid);
    const settled = () => {
      const entry = statements.get(label) ?? { ns: 0, calls: 0 };
      entry.ns += onCpuNs(pid) - before;
      entry.calls += 1;
      statements.set(label, entry);
    };
    const result = original.apply(this, args);
    if (!(result instanceof Promise)) {
      // A COPY: an emitter (a pg-copy-streams stream, or copyIn's), settled when the server has taken the rows.
      const stream = result as NodeJS.EventEmitter;
      stream.once('finish', settled);
      stream.once('error', settled);
      return result;
    }
    return result.then(
      (value) => {
        settled();
        return value;
      },
      (error: unknown) => {
        settled();
        throw error;
      },
    );
  } as typeof Client.prototype.query;
}

async function main(): Promise<number> {
  const options = commandLine('bench:ingest-breakdown', USAGE, parseOptions);
  instrumentPg();
  const databaseUrl = await createDatabase(NAME);
  const dataSource = await createDataSource({ url: databaseUrl, poolSize: 2, applicationName: 'bench-ingest-breakdown' }).initialize();
  try {
    await runMigrations(dataSource);
    if (options.setup) await dataSource.query(options.setup);
    const normalization = new NormalizationService(dataSource);
    await normalization.loadReference();
    const observations = [...generateObservations({ auctions: options.auctions, seed: options.seed })];
    const bodies = observations.map((o) => Buffer.from(JSON.stringify(o)));
    // The vocabulary as the ingest bench finds it (its bulk loader baseline fills it).
    const tokens = new Set<string>();
    for (const o of observations) for (const token of o.auction?.description?.split(' ') ?? []) if (token) tokens.add(token);
    await dataSource.query(`SELECT add_description_tokens($1::text[])`, [[...tokens]]);
    log(`${observations.length} observations, batches of ${options.batchSize}; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);

    let figures: Record<string, unknown> = {};
    for (let round = 1; round <= options.rounds; round += 1) {
      await dataSource.query(`TRUNCATE auctions, bids, bid_identities, events, pending_observations RESTART IDENTITY CASCADE`);
      await dataSource.query(`VACUUM ANALYZE auctions`);
      const processor = new ObservationProcessor(dataSource);
      statements.clear();
      let parseNs = 0;
      let validateNs = 0;
      let applyNs = 0;
      let relayNs = 0;
      let events = 0;
      const relay = new OutboxRelay(dataSource, { publish: () => Promise.resolve() });
      const started = Date.now();
      for (let i = 0; i < bodies.length; i += options.batchSize) {
        const chunk = bodies.slice(i, i + options.batchSize);
        let t = cpuNs();
        const parsed = chunk.map((body) => JSON.parse(body.toString('utf8')) as unknown);
        parseNs += cpuNs() - t;
        t = cpuNs();
        const valid: Observation[] = [];
        for (const value of parsed) {
          const outcome = parseObservation(value);
          if (outcome.ok) valid.push(outcome.value);
        }
        validateNs += cpuNs() - t;
        recording = true;
        t = cpuNs();
        const result = await processor.processBatch(valid);
        applyNs += cpuNs() - t;
        recording = false;
        events += result.events;
        // The relay's share: its claim and mark statements (publishing itself is left out: no broker here).
        recording = true;
        t = cpuNs();
        while ((await relay.relayOnce()) > 0) {
          // until the outbox is empty
        }
        relayNs += cpuNs() - t;
        recording = false;
      }
      const wallMs = Date.now() - started;
      const n = bodies.length;
      const us = (ns: number) => Math.round(ns / n / 100) / 10;
      const database = [...statements].sort((a, b) => b[1].ns - a[1].ns);
      const databaseUs = database.reduce((sum, [, s]) => sum + s.ns, 0);
      figures = {
        round,
        observations: n,
        events,
        batch_size: options.batchSize,
        wall_ms: wallMs,
        node_us_per_observation: { parse: us(parseNs), validate: us(validateNs), apply: us(applyNs), relay: us(relayNs), total: us(parseNs + validateNs + applyNs + relayNs) },
        postgres_us_per_observation: {
          ...Object.fromEntries(database.map(([label, s]) => [`${label} (${s.calls}×)`, us(s.ns)])),
          total: us(databaseUs),
        },
        load_average: loadavg().map((l) => Number(l.toFixed(2))),
      };
      log(`round ${round}: ${wallMs} ms, node ${us(parseNs + validateNs + applyNs + relayNs)} µs, PostgreSQL ${us(databaseUs)} µs per observation`);
    }
    process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
    return 0;
  } finally {
    await dataSource.destroy();
    if (!options.keep) await dropDatabase(NAME);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`bench:ingest-breakdown failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
    process.exit(2);
  },
);
