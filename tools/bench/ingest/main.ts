import 'reflect-metadata';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { connect } from 'amqplib';
import { Queues } from '@cars/contracts';
import { generateObservations } from '@cars/datagen';
import { assertObservationTopology } from '@cars/messaging';
import { createDataSource, runMigrations } from '@cars/persistence';
import { bulkLoadObservations, NormalizationService } from '@cars/service-change-detector';
import { createDatabase, createVhost, deleteVhost, dropDatabase } from '@cars/testing';
import { DataSource } from 'typeorm';
import { booleanFlag, commandLine, integerFlag, parseFlags, stringFlag } from '../common/args';

/**
 * Ingestion benchmark:
 *
 *   npm run build && node dist/tools/bench/ingest/main.js [--auctions 30000] [--seed 1]
 *     [--batch-size 1000] [--concurrency 2] [--split-relay] [--bare] [--prefill] [--queue-v2] [--keep]
 *
 * 1. Database `cars_bench_ingest` (recreated: migrations, reference catalog) and RabbitMQ vhost
 *    `cars_bench_ingest`; datagen observations for N auctions (+ its live ones) held in memory.
 * 2. Baselines in the same run: the raw publish rate (confirmed publishes to a scratch queue,
 *    nothing consuming) and the bulk loader's rate (same rows, no events), then the tables are
 *    emptied again.
 * 3. The change-detector app as its own process (dist/apps/change-detector) consuming that vhost;
 *    every observation published to `observations` with confirms as fast as the broker takes
 *    them; done when every auction row holds its newest observation and the queue is empty.
 *    Sustained rate = observations / (last applied − first published). Events go through the
 *    outbox relay to `auction.events` as in production.
 *
 * 4. Then waits until the relay has published every event and reports the relay's rate.
 *
 * --split-relay runs the outbox relay in a second change-detector process (CHANGE_DETECTOR_ROLE)
 * instead of beside the consumer.
 *
 * --bare drops the keyword indexes (title trigrams, description tokens) and disables the
 * triggers on `auctions` in the bench database, to show what those cost the write path; the
 * default keeps the real schema.
 *
 * --queue-v2 sets the operator policy `queue-version: 2` on the bench vhost (classic queue
 * storage version 2, opt-in on older RabbitMQ such as 3.10): ~5% less machine CPU per
 * observation here (docs/operations.md).
 *
 * Target: ≥ 3,000 observations/s through RabbitMQ. Exit code 1 when it is missed.
 * Servers: TEST_POSTGRES_ADMIN_URL (postgres://postgres@127.0.0.1:5432/postgres) and
 * TEST_RABBITMQ_BASE_URL (amqp://guest:guest@127.0.0.1:5672), as the test suite uses.
 */

const NAME = 'cars_bench_ingest';

/** Busy and total CPU time of the machine (all cores, /proc/stat ticks); undefined off Linux. */
function machineCpu(): { busy: number; total: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const idle = fields[3] + (fields[4] ?? 0); // idle + iowait
    const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

/** CPU spent per observation by every process (the pipeline is CPU-bound on 2 cores: a steadier figure than the rate). */
function cpuPerObservation(
  before: { busy: number; total: number } | undefined,
  after: { busy: number; total: number } | undefined,
  observations: number,
): { perObservationUs: number; busyPercent: number } | undefined {
  if (!before || !after || after.total <= before.total) return undefined;
  const ticksPerSecond = 100; // USER_HZ on Linux
  const busy = after.busy - before.busy;
  return {
    perObservationUs: Math.round(((busy / ticksPerSecond) * 1e6) / observations),
    busyPercent: Math.round((100 * busy) / (after.total - before.total)),
  };
}
const TARGET = 3000;

interface Options {
  auctions: number;
  seed: string;
  batchSize: number;
  concurrency: number;
  keep: boolean;
  bare: boolean;
  splitRelay: boolean;
  prefill: boolean;
  queueV2: boolean;
}

const USAGE = `Usage: node dist/tools/bench/ingest/main.js [options]

  --auctions N       completed auctions of the data set, plus its live ones (default 30000)
  --seed S           data set seed (default "1")
  --batch-size N     the change-detector's OBSERVATION_BATCH_SIZE (default 1000)
  --concurrency N    the change-detector's OBSERVATION_CONCURRENCY (default 2)
  --split-relay      run the outbox relay in a second change-detector process
  --bare             drop the keyword indexes and disable the triggers on auctions
  --prefill          queue every observation before the change-detector starts
  --queue-v2         set the operator policy queue-version: 2 on the bench vhost
  --keep             keep the database and vhost afterwards
  -h, --help         this text`;

function parseOptions(argv: readonly string[]): Options | 'help' {
  const flags = parseFlags(argv, {
    auctions: { type: 'string' },
    seed: { type: 'string' },
    'batch-size': { type: 'string' },
    concurrency: { type: 'string' },
    keep: { type: 'boolean' },
    bare: { type: 'boolean' },
    'split-relay': { type: 'boolean' },
    prefill: { type: 'boolean' },
    'queue-v2': { type: 'boolean' },
  });
  if (flags === 'help') return 'help';
  return {
    auctions: integerFlag(flags, 'auctions', 30000, 1),
    seed: stringFlag(flags, 'seed', '1'),
    batchSize: integerFlag(flags, 'batch-size', 1000, 1),
    concurrency: integerFlag(flags, 'concurrency', 2, 1),
    keep: booleanFlag(flags, 'keep'),
    bare: booleanFlag(flags, 'bare'),
    splitRelay: booleanFlag(flags, 'split-relay'),
    prefill: booleanFlag(flags, 'prefill'),
    queueV2: booleanFlag(flags, 'queue-v2'),
  };
}

const log = (message: string) => process.stderr.write(`bench:ingest ${message}\n`);
const rate = (count: number, ms: number) => Math.round(count / (ms / 1000));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function publishAll(url: string, queue: string, bodies: Buffer[]): Promise<number> {
  const connection = await connect(url, { noDelay: true });
  try {
    const channel = await connection.createConfirmChannel();
    await assertObservationTopology(channel);
    await channel.assertQueue(queue, { durable: true });
    const started = Date.now();
    for (let i = 0; i < bodies.length; i += 1) {
      if (!channel.sendToQueue(queue, bodies[i], { persistent: true, contentType: 'application/json' })) {
        await new Promise((resolve) => channel.once('drain', resolve));
      }
      if (i % 2000 === 1999) await channel.waitForConfirms();
    }
    await channel.waitForConfirms();
    const ms = Date.now() - started;
    await channel.close();
    return ms;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

async function emptyTables(dataSource: DataSource): Promise<void> {
  await dataSource.query(`TRUNCATE auctions, bids, bid_identities, events, pending_observations RESTART IDENTITY CASCADE`);
}

async function main(): Promise<number> {
  const options = commandLine('bench:ingest', USAGE, parseOptions);
  log(`${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const databaseUrl = await createDatabase(NAME);
  const rabbitUrl = createVhost(NAME);
  if (options.queueV2) {
    // Classic queue storage version 2 for every queue of the vhost, as an operator policy would set it.
    execFileSync('rabbitmqctl', ['set_policy', '-p', NAME, 'queue-v2', '.*', '{"queue-version":2}', '--apply-to', 'queues'], {
      stdio: 'ignore',
    });
  }
  const dataSource = await createDataSource({ url: databaseUrl, poolSize: 4, applicationName: 'bench-ingest' }).initialize();
  let child: ChildProcess | undefined;
  let relayChild: ChildProcess | undefined;
  try {
    await runMigrations(dataSource);
    await new NormalizationService(dataSource).loadReference();
    if (options.bare) {
      await dataSource.query(`DROP INDEX IF EXISTS auctions_title_trgm_idx, auctions_description_tokens_idx`);
      await dataSource.query(`ALTER TABLE auctions DISABLE TRIGGER USER`);
      log('bare schema: no keyword indexes, no triggers on auctions');
    }

    const observations = [...generateObservations({ auctions: options.auctions, seed: options.seed })];
    const bodies = observations.map((o) => Buffer.from(JSON.stringify(o)));
    const newest = new Map<string, string>();
    for (const o of observations) {
      const key = `${o.source}\u001f${o.source_auction_id}`;
      const at = new Date(o.observed_at).toISOString();
      if (o.auction && (newest.get(key) ?? '') < at) newest.set(key, at);
    }
    const bidCount = observations.reduce((n, o) => n + o.bids.length, 0);
    log(`${observations.length} observations (${newest.size} auctions, ${bidCount} bids)`);

    // Baseline 1: raw confirmed publishes, nobody consuming.
    const rawMs = await publishAll(rabbitUrl, 'bench.raw', bodies);
    {
      const connection = await connect(rabbitUrl);
      const channel = await connection.createChannel();
      await channel.deleteQueue('bench.raw');
      await connection.close();
    }
    log(`raw publish: ${rate(bodies.length, rawMs)} msg/s`);

    // Baseline 2: the bulk loader (same normalization and rows, no events).
    const bulk = await bulkLoadObservations(dataSource, observations);
    log(`bulk loader: ${rate(observations.length, bulk.ms)} obs/s (${bulk.ms} ms)`);
    await emptyTables(dataSource);
    await dataSource.query(`VACUUM ANALYZE auctions`);

    // The pipeline: the change-detector process consuming `observations`.
    // BENCH_CHILD_NODE_ARGS: extra node flags for the change-detector (e.g. --cpu-prof).
    const nodeArgs = (process.env.BENCH_CHILD_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const startApp = (role: string) =>
      spawn(process.execPath, [...nodeArgs, join(__dirname, '../../../apps/change-detector/src/main.js')], {
        env: {
          ...process.env,
          DATABASE_URL: databaseUrl,
          RABBITMQ_URL: rabbitUrl,
          HEALTH_PORT: '0',
          LOG_LEVEL: 'warn',
          OBSERVATION_BATCH_SIZE: String(options.batchSize),
          OBSERVATION_CONCURRENCY: String(options.concurrency),
          CHANGE_DETECTOR_ROLE: role,
        },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
    const probe = await connect(rabbitUrl);
    const probeChannel = await probe.createChannel();
    await assertObservationTopology(probeChannel);
    // --prefill: the scrapers' side is elsewhere in production; queue everything first, so the
    // figure is the change-detector draining a backlog, not sharing the 2 cores with a publisher.
    let publishMs = 0;
    if (options.prefill) {
      publishMs = await publishAll(rabbitUrl, Queues.Observations, bodies);
      log(`prefilled ${bodies.length} observations in ${publishMs} ms`);
    }
    child = startApp(options.splitRelay ? 'consumer' : 'all');
    if (options.splitRelay) relayChild = startApp('relay');
    for (let i = 0; (await probeChannel.checkQueue(Queues.Observations)).consumerCount === 0; i += 1) {
      if (i > 3000 || child.exitCode !== null) throw new Error('the change-detector did not start consuming');
      await sleep(10);
    }

    const keys = [...newest.keys()].map((k) => k.split('\u001f'));
    const expectedAt = [...newest.values()];
    const applied = async (): Promise<number> => {
      const [{ n }] = await dataSource.query(
        `SELECT count(*)::int AS n FROM auctions a
         JOIN unnest($1::text[], $2::text[], $3::timestamptz[]) AS k(s, i, m)
           ON a.source = k.s AND a.source_auction_id = k.i AND a.observed_at = k.m`,
        [keys.map((k) => k[0]), keys.map((k) => k[1]), expectedAt],
      );
      return n as number;
    };

    const started = Date.now();
    const cpuBefore = machineCpu();
    if (!options.prefill) void publishAll(rabbitUrl, Queues.Observations, bodies).then((ms) => (publishMs = ms));
    let done = 0;
    let lastLog = 0;
    for (;;) {
      await sleep(100);
      // The broker's count is free; the exact check (a join over every key) only runs once the
      // queue is empty, so measuring does not take CPU from what is measured.
      const queued = (await probeChannel.checkQueue(Queues.Observations)).messageCount;
      if (queued === 0 && publishMs > 0) done = await applied();
      if (Date.now() - lastLog > 2000) {
        lastLog = Date.now();
        log(`  ${queued} queued, ${((Date.now() - started) / 1000).toFixed(1)} s`);
      }
      if (done >= newest.size && queued === 0 && publishMs > 0) break;
      if (child.exitCode !== null) throw new Error(`the change-detector exited (${child.exitCode})`);
      if (Date.now() - started > 30 * 60 * 1000) throw new Error('timed out');
    }
    const pipelineMs = Date.now() - started;
    const cpu = cpuPerObservation(cpuBefore, machineCpu(), observations.length);
    await probe.close();
    const [events] = await dataSource.query(
      `SELECT count(*)::int AS total, count(*) FILTER (WHERE published_at IS NOT NULL)::int AS published FROM events`,
    );
    const sustained = rate(observations.length, pipelineMs);
    // The relay's backlog: every event published.
    for (;;) {
      const [{ left }] = await dataSource.query(`SELECT count(*)::int AS left FROM events WHERE published_at IS NULL`);
      if (left === 0) break;
      if (Date.now() - started > 30 * 60 * 1000) throw new Error('timed out waiting for the relay');
      await sleep(200);
    }
    const relayedMs = Date.now() - started;
    const summary = {
      observations: observations.length,
      auctions: newest.size,
      bids: bidCount,
      batch_size: options.batchSize,
      concurrency: options.concurrency,
      raw_publish_per_s: rate(bodies.length, rawMs),
      bulk_load_per_s: rate(observations.length, bulk.ms),
      bulk_load_ms: bulk.ms,
      publish_with_consumer_per_s: rate(bodies.length, publishMs),
      pipeline_ms: pipelineMs,
      sustained_observations_per_s: sustained,
      machine_cpu_us_per_observation: cpu?.perObservationUs ?? null,
      machine_cpu_busy_percent: cpu?.busyPercent ?? null,
      events_written: events.total,
      events_published_when_applied: events.published,
      all_events_published_ms: relayedMs,
      events_relayed_per_s: rate(events.total, relayedMs),
      bare_schema: options.bare,
      split_relay: options.splitRelay,
      queue_version_2: options.queueV2,
      prefill: options.prefill,
      target_per_s: TARGET,
      target_met: sustained >= TARGET,
      load_average: loadavg().map((l) => Number(l.toFixed(2))),
    };
    log(`sustained through RabbitMQ: ${sustained} obs/s (target ${TARGET})`);
    if (cpu) log(`machine CPU while ingesting: ${cpu.busyPercent}% busy, ${cpu.perObservationUs} µs of CPU per observation (every process)`);
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    return summary.target_met ? 0 : 1;
  } finally {
    for (const proc of [child, relayChild]) {
      if (!proc || proc.exitCode !== null) continue;
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      await Promise.race([exited, sleep(5000)]);
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
    await dataSource.destroy();
    if (!options.keep) {
      deleteVhost(NAME);
      await dropDatabase(NAME);
    }
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`bench:ingest failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
    process.exit(2);
  },
);
