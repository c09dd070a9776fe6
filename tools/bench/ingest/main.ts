import 'reflect-metadata';
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { connect } from 'amqplib';
import { MAX_OBSERVATIONS_PER_MESSAGE, Queues } from '@cars/contracts';
import { generateObservations, Observation } from '@cars/datagen';
import { assertObservationTopology, DURABLE_QUEUE } from '@cars/messaging';
import { createDataSource, runMigrations } from '@cars/persistence';
import { bulkLoadObservations, NormalizationService } from '@cars/service-change-detector';
import { createDatabase, createVhost, deleteVhost, dropDatabase } from '@cars/testing';
import { DataSource } from 'typeorm';
import { booleanFlag, commandLine, integerFlag, parseFlags, stringFlag, UsageError } from '../common/args';
import { pidsNamed } from '../common/cpu';
import { ProcessGroupsCpu } from './process-cpu';

/**
 * Ingestion benchmark:
 *
 *   npm run build && node dist/tools/bench/ingest/main.js [--auctions 30000] [--seed 1]
 *     [--batch-size 1000] [--concurrency 2] [--per-message 100] [--split-relay] [--bare] [--prefill] [--queue-v2]
 *     [--rounds N] [--compare OTHER/dist/apps/change-detector/src/main.js] [--skip-baselines] [--keep]
 *
 * 1. Database `cars_bench_ingest` (recreated: migrations, reference catalog) and RabbitMQ vhost
 *    `cars_bench_ingest`; datagen observations for N auctions (+ its live ones) held in memory.
 * 2. Baselines in the same run: the raw publish rate (confirmed publishes to a scratch queue,
 *    nothing consuming) and the bulk loader's rate (same rows, no events) with its CPU per
 *    observation (this process and the database's backends), then the tables are emptied again.
 *    The summary sets the pipeline's rate against the bulk loader's, and the bulk loader's CPU
 *    per observation against the pipeline's (steady when other work shares the machine).
 * 3. The change-detector app as its own process (dist/apps/change-detector) consuming that vhost;
 *    every observation published to `observations` with confirms as fast as the broker takes
 *    them, `--per-message` observations per message (a JSON array, as a scraper publishes a page;
 *    1: one observation object per message); done when every auction row holds its newest
 *    observation and the queue is empty.
 *    Sustained rate = observations / (last applied − first published). Events go through the
 *    outbox relay to `auction.events` as in production.
 * 4. Then waits until the relay has published every event and reports the relay's rate.
 *
 * CPU per observation, by process (read from /proc, so the figure holds when other work shares
 * the machine and the rate does not): the change-detector process (consumer and relay), the
 * PostgreSQL backends of the bench database (the bench's own connections excluded; autovacuum
 * apart), the RabbitMQ broker (the whole broker: other users of it count too) and the machine
 * (/proc/stat, every process). Measured from the first publish until every event is relayed, so
 * the relay's tail is included.
 *
 * --rounds N runs the pipeline N times (tables emptied in between); with --compare PATH each
 * round also runs the change-detector built at PATH (e.g. a checkout of the previous commit,
 * built), in alternating order, against the same database and queue: a before/after comparison
 * under the same machine load (with `--per-message 1` for a build that reads no arrays). Medians
 * per build are printed at the end.
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
 * Target: ≥ 6,000 observations/s through RabbitMQ (issue 17's goal). Exit code 1 when the
 * median of this build misses it.
 * Servers: TEST_POSTGRES_ADMIN_URL (postgres://postgres@127.0.0.1:5432/postgres) and
 * TEST_RABBITMQ_BASE_URL (amqp://guest:guest@127.0.0.1:5672), as the test suite uses.
 */

const NAME = 'cars_bench_ingest';
/** application_name of the bench's own connections (left out of PostgreSQL's share). */
const BENCH_APPLICATION = 'bench-ingest';
const TARGET = 6000;

interface Options {
  auctions: number;
  seed: string;
  batchSize: number;
  concurrency: number;
  perMessage: number;
  keep: boolean;
  bare: boolean;
  splitRelay: boolean;
  prefill: boolean;
  queueV2: boolean;
  rounds: number;
  compare: string | undefined;
  skipBaselines: boolean;
}

const USAGE = `Usage: node dist/tools/bench/ingest/main.js [options]

  --auctions N       completed auctions of the data set, plus its live ones (default 30000)
  --seed S           data set seed (default "1")
  --batch-size N     the change-detector's OBSERVATION_BATCH_SIZE (default 1000)
  --concurrency N    the change-detector's OBSERVATION_CONCURRENCY (default 2)
  --per-message N    observations per message, as a JSON array (default 100; 1: one object per message)
  --split-relay      run the outbox relay in a second change-detector process
  --bare             drop the keyword indexes and disable the triggers on auctions
  --prefill          queue every observation before the change-detector starts
  --queue-v2         set the operator policy queue-version: 2 on the bench vhost
  --rounds N         run the pipeline N times (default 1)
  --compare PATH     also run the change-detector at PATH (its dist/apps/change-detector/src/main.js) each round
  --skip-baselines   skip the raw publish and bulk loader baselines
  --keep             keep the database and vhost afterwards
  -h, --help         this text`;

function parseOptions(argv: readonly string[]): Options | 'help' {
  const flags = parseFlags(argv, {
    auctions: { type: 'string' },
    seed: { type: 'string' },
    'batch-size': { type: 'string' },
    concurrency: { type: 'string' },
    'per-message': { type: 'string' },
    keep: { type: 'boolean' },
    bare: { type: 'boolean' },
    'split-relay': { type: 'boolean' },
    prefill: { type: 'boolean' },
    'queue-v2': { type: 'boolean' },
    rounds: { type: 'string' },
    compare: { type: 'string' },
    'skip-baselines': { type: 'boolean' },
  });
  if (flags === 'help') return 'help';
  const compare = stringFlag(flags, 'compare', '');
  const perMessage = integerFlag(flags, 'per-message', 100, 1);
  if (perMessage > MAX_OBSERVATIONS_PER_MESSAGE) throw new UsageError(`--per-message takes at most ${MAX_OBSERVATIONS_PER_MESSAGE}`);
  return {
    auctions: integerFlag(flags, 'auctions', 30000, 1),
    seed: stringFlag(flags, 'seed', '1'),
    batchSize: integerFlag(flags, 'batch-size', 1000, 1),
    concurrency: integerFlag(flags, 'concurrency', 2, 1),
    perMessage,
    keep: booleanFlag(flags, 'keep'),
    bare: booleanFlag(flags, 'bare'),
    splitRelay: booleanFlag(flags, 'split-relay'),
    prefill: booleanFlag(flags, 'prefill'),
    queueV2: booleanFlag(flags, 'queue-v2'),
    rounds: integerFlag(flags, 'rounds', 1, 1),
    compare: compare === '' ? undefined : resolve(compare),
    skipBaselines: booleanFlag(flags, 'skip-baselines'),
  };
}

const log = (message: string) => process.stderr.write(`bench:ingest ${message}\n`);
const rate = (count: number, ms: number) => Math.round(count / (ms / 1000));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : Math.round((sorted[mid - 1] + sorted[mid]) / 2);
};

async function publishAll(url: string, queue: string, bodies: Buffer[]): Promise<number> {
  const connection = await connect(url, { noDelay: true });
  try {
    const channel = await connection.createConfirmChannel();
    await assertObservationTopology(channel);
    await channel.assertQueue(queue, DURABLE_QUEUE);
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

/** One pipeline run's figures. */
interface RunResult {
  build: string;
  observations_per_s: number;
  pipeline_ms: number;
  publish_with_consumer_per_s: number;
  /** µs of CPU per observation by process group (see the header). */
  cpu_us_per_observation: Record<string, number>;
  events_written: number;
  events_published_when_applied: number;
  all_events_published_ms: number;
  events_relayed_per_s: number;
  load_average: number[];
}

interface Pipeline {
  options: Options;
  dataSource: DataSource;
  databaseUrl: string;
  rabbitUrl: string;
  /** The messages: `perMessage` observations each. */
  bodies: Buffer[];
  observations: number;
  /** Newest observation time of each auction, by `source \u001f source_auction_id`. */
  newest: Map<string, string>;
  /** The auctions of the last message's observations (those with an auction part). */
  lastKeys: string[];
}

/** The PostgreSQL backends of the bench database, the bench's own connections left out unless `withBench`. */
async function databaseProcesses(dataSource: DataSource, withBench = false): Promise<{ backends: number[]; autovacuum: number[] }> {
  const rows: { pid: number; autovacuum: boolean }[] = await dataSource.query(
    `SELECT pid, backend_type = 'autovacuum worker' AS autovacuum FROM pg_stat_activity
     WHERE datname = $1 AND ($3 OR coalesce(application_name, '') <> $2)`,
    [NAME, BENCH_APPLICATION, withBench],
  );
  return { backends: rows.filter((r) => !r.autovacuum).map((r) => r.pid), autovacuum: rows.filter((r) => r.autovacuum).map((r) => r.pid) };
}

/** Runs the change-detector at `app` over the whole data set once; the tables are emptied first. */
async function runPipeline(pipeline: Pipeline, app: string, build: string): Promise<RunResult> {
  const { options, dataSource, bodies, observations, newest, lastKeys } = pipeline;
  await emptyTables(dataSource);
  await dataSource.query(`VACUUM ANALYZE auctions`);
  // BENCH_CHILD_NODE_ARGS: extra node flags for the change-detector (e.g. --cpu-prof).
  const nodeArgs = (process.env.BENCH_CHILD_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const startApp = (role: string) =>
    spawn(process.execPath, [...nodeArgs, app], {
      env: {
        ...process.env,
        DATABASE_URL: pipeline.databaseUrl,
        RABBITMQ_URL: pipeline.rabbitUrl,
        HEALTH_PORT: '0',
        LOG_LEVEL: 'warn',
        OBSERVATION_BATCH_SIZE: String(options.batchSize),
        OBSERVATION_CONCURRENCY: String(options.concurrency),
        CHANGE_DETECTOR_ROLE: role,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  const children: ChildProcess[] = [];
  const probe = await connect(pipeline.rabbitUrl);
  try {
    const probeChannel = await probe.createChannel();
    await assertObservationTopology(probeChannel);
    // --prefill: the scrapers' side is elsewhere in production; queue everything first, so the
    // figure is the change-detector draining a backlog, not sharing the 2 cores with a publisher.
    let publishMs = 0;
    if (options.prefill) {
      publishMs = await publishAll(pipeline.rabbitUrl, Queues.Observations, bodies);
      log(`prefilled ${observations} observations (${bodies.length} messages) in ${publishMs} ms`);
    }
    const child = startApp(options.splitRelay ? 'consumer' : 'all');
    children.push(child);
    if (options.splitRelay) children.push(startApp('relay'));
    for (let i = 0; (await probeChannel.checkQueue(Queues.Observations)).consumerCount === 0; i += 1) {
      if (i > 3000 || child.exitCode !== null) throw new Error('the change-detector did not start consuming');
      await sleep(10);
    }

    /** How many of these auctions hold their newest observation. */
    const applied = async (of: readonly string[]): Promise<number> => {
      const keys = of.map((k) => k.split('\u001f'));
      const [{ n }] = await dataSource.query(
        `SELECT count(*)::int AS n FROM auctions a
         JOIN unnest($1::text[], $2::text[], $3::timestamptz[]) AS k(s, i, m)
           ON a.source = k.s AND a.source_auction_id = k.i AND a.observed_at = k.m`,
        [keys.map((k) => k[0]), keys.map((k) => k[1]), of.map((k) => newest.get(k))],
      );
      return n as number;
    };
    const everyKey = [...newest.keys()];
    const broker = pidsNamed('beam.smp');
    const cpu = new ProcessGroupsCpu(async () => {
      const database = await databaseProcesses(dataSource);
      return {
        'change-detector': children.map((c) => c.pid ?? 0).filter((pid) => pid > 0),
        postgres: database.backends,
        autovacuum: database.autovacuum,
        rabbitmq: broker,
      };
    });
    await cpu.sample();

    const started = Date.now();
    if (!options.prefill) void publishAll(pipeline.rabbitUrl, Queues.Observations, bodies).then((ms) => (publishMs = ms));
    let done = 0;
    let lastLog = 0;
    for (;;) {
      await sleep(100);
      await cpu.sample();
      // The broker's count is free; the exact check (a join over every key) only runs once the
      // queue is empty and the auctions of the last message hold their newest observation (a
      // few keys: with arrays the consumer takes the whole queue into its prefetch early), so
      // measuring does not take CPU from what is measured.
      const queued = (await probeChannel.checkQueue(Queues.Observations)).messageCount;
      if (queued === 0 && publishMs > 0 && (await applied(lastKeys)) === lastKeys.length) done = await applied(everyKey);
      if (Date.now() - lastLog > 2000) {
        lastLog = Date.now();
        log(`  ${queued} queued, ${((Date.now() - started) / 1000).toFixed(1)} s`);
      }
      if (done >= newest.size && queued === 0 && publishMs > 0) break;
      if (child.exitCode !== null) throw new Error(`the change-detector exited (${child.exitCode})`);
      if (Date.now() - started > 30 * 60 * 1000) throw new Error('timed out');
    }
    const pipelineMs = Date.now() - started;
    const [events] = await dataSource.query(
      `SELECT count(*)::int AS total, count(*) FILTER (WHERE published_at IS NOT NULL)::int AS published FROM events`,
    );
    // The relay's backlog: every event published.
    for (;;) {
      await cpu.sample();
      const [{ left }] = await dataSource.query(`SELECT count(*)::int AS left FROM events WHERE published_at IS NULL`);
      if (left === 0) break;
      if (Date.now() - started > 30 * 60 * 1000) throw new Error('timed out waiting for the relay');
      await sleep(100);
    }
    const relayedMs = Date.now() - started;
    await cpu.sample();
    const result: RunResult = {
      build,
      observations_per_s: rate(observations, pipelineMs),
      pipeline_ms: pipelineMs,
      publish_with_consumer_per_s: rate(observations, publishMs),
      cpu_us_per_observation: cpu.perUnit(observations),
      events_written: events.total,
      events_published_when_applied: events.published,
      all_events_published_ms: relayedMs,
      events_relayed_per_s: rate(events.total, relayedMs),
      load_average: loadavg().map((l) => Number(l.toFixed(2))),
    };
    const c = result.cpu_us_per_observation;
    log(
      `${build}: ${result.observations_per_s} obs/s; CPU µs per observation: change-detector ${c['change-detector']}, ` +
        `PostgreSQL ${c.postgres} (+ autovacuum ${c.autovacuum ?? 0}), RabbitMQ ${c.rabbitmq} (whole broker), ` +
        `machine ${c.machine ?? '?'} (${c.machine_busy_percent ?? '?'}% busy); load ${result.load_average.join(' ')}`,
    );
    return result;
  } finally {
    await probe.close().catch(() => undefined);
    for (const proc of children) {
      if (proc.exitCode !== null) continue;
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      await Promise.race([exited, sleep(5000)]);
      if (proc.exitCode === null) proc.kill('SIGKILL');
    }
  }
}

/** Medians of a build's runs. */
function summarize(runs: readonly RunResult[]): Record<string, unknown> {
  const groups = new Set(runs.flatMap((r) => Object.keys(r.cpu_us_per_observation)));
  return {
    runs: runs.length,
    observations_per_s: median(runs.map((r) => r.observations_per_s)),
    observations_per_s_each: runs.map((r) => r.observations_per_s),
    cpu_us_per_observation: Object.fromEntries(
      [...groups].map((g) => [g, median(runs.map((r) => r.cpu_us_per_observation[g] ?? 0))]),
    ),
    events_relayed_per_s: median(runs.map((r) => r.events_relayed_per_s)),
  };
}

/** The vhost (classic queues v2 by policy when asked) and the database, migrated, reference loaded, keyword indexes and triggers dropped when `bare`. */
async function setUp(options: Options): Promise<{ databaseUrl: string; rabbitUrl: string; dataSource: DataSource }> {
  const databaseUrl = await createDatabase(NAME);
  const rabbitUrl = createVhost(NAME);
  if (options.queueV2) {
    // Classic queue storage version 2 for every queue of the vhost, as an operator policy would set it.
    execFileSync('rabbitmqctl', ['set_policy', '-p', NAME, 'queue-v2', '.*', '{"queue-version":2}', '--apply-to', 'queues'], {
      stdio: 'ignore',
    });
  }
  const dataSource = await createDataSource({ url: databaseUrl, poolSize: 4, applicationName: BENCH_APPLICATION }).initialize();
  return { databaseUrl, rabbitUrl, dataSource };
}

async function prepareSchema(options: Options, dataSource: DataSource): Promise<void> {
  await runMigrations(dataSource);
  await new NormalizationService(dataSource).loadReference();
  if (options.bare) {
    await dataSource.query(`DROP INDEX IF EXISTS auctions_title_trgm_idx, auctions_description_tokens_idx`);
    await dataSource.query(`ALTER TABLE auctions DISABLE TRIGGER USER`);
    log('bare schema: no keyword indexes, no triggers on auctions');
  }
}

/** The observations, their message bodies, the newest observation time of each auction, and the auctions of the last message. */
function generate(options: Options): Generated {
  const observations = [...generateObservations({ auctions: options.auctions, seed: options.seed })];
  const bodies: Buffer[] = [];
  for (let i = 0; i < observations.length; i += options.perMessage) {
    const body = options.perMessage === 1 ? observations[i] : observations.slice(i, i + options.perMessage);
    bodies.push(Buffer.from(JSON.stringify(body)));
  }
  const newest = new Map<string, string>();
  for (const o of observations) {
    const key = `${o.source}\u001f${o.source_auction_id}`;
    const at = new Date(o.observed_at).toISOString();
    if (o.auction && (newest.get(key) ?? '') < at) newest.set(key, at);
  }
  const bidCount = observations.reduce((n, o) => n + o.bids.length, 0);
  const lastMessage = observations.slice((bodies.length - 1) * options.perMessage);
  const lastKeys = [...new Set(lastMessage.filter((o) => o.auction).map((o) => `${o.source}\u001f${o.source_auction_id}`))];
  log(`${observations.length} observations in ${bodies.length} messages (${newest.size} auctions, ${bidCount} bids)`);
  return { observations, bodies, newest, lastKeys, bidCount };
}

interface Generated {
  observations: Observation[];
  bodies: Buffer[];
  newest: Map<string, string>;
  lastKeys: string[];
  bidCount: number;
}

/**
 * The baselines: raw confirmed publishes (nobody consuming) and the bulk loader (same
 * normalization and rows, no events). Skipped, the description vocabulary is filled as the bulk
 * loader would: every run finds it filled either way.
 */
async function baselines(
  options: Options,
  dataSource: DataSource,
  rabbitUrl: string,
  observations: Observation[],
  bodies: Buffer[],
): Promise<Baseline> {
  if (options.skipBaselines) {
    const tokens = new Set<string>();
    for (const o of observations) for (const token of o.auction?.description?.split(' ') ?? []) if (token) tokens.add(token);
    await dataSource.query(`SELECT add_description_tokens($1::text[])`, [[...tokens]]);
    return {};
  }
  const rawMs = await publishAll(rabbitUrl, 'bench.raw', bodies);
  const connection = await connect(rabbitUrl);
  const channel = await connection.createChannel();
  await channel.deleteQueue('bench.raw');
  await connection.close();
  log(`raw publish: ${rate(bodies.length, rawMs)} msg/s (${rate(observations.length, rawMs)} obs/s)`);
  // Its CPU as the pipeline's is read: this process (the loader) and the database's backends.
  const cpu = new ProcessGroupsCpu(async () => ({ postgres: (await databaseProcesses(dataSource, true)).backends }));
  await cpu.sample();
  const bulkMs = (await bulkLoadObservations(dataSource, observations)).ms;
  await cpu.sample();
  const bulkCpu = cpu.perUnit(observations.length);
  log(
    `bulk loader: ${rate(observations.length, bulkMs)} obs/s (${bulkMs} ms); CPU µs per observation: loader ${bulkCpu.bench}, ` +
      `PostgreSQL ${bulkCpu.postgres}, machine ${bulkCpu.machine ?? '?'} (${bulkCpu.machine_busy_percent ?? '?'}% busy)`,
  );
  return { rawMs, bulkMs, bulkCpu };
}

/** The pipeline runs: this build, and the compared one when asked, alternating who goes first. */
async function runRounds(pipeline: Pipeline): Promise<RunResult[]> {
  const { options } = pipeline;
  const thisBuild = join(__dirname, '../../../apps/change-detector/src/main.js');
  const runs: RunResult[] = [];
  for (let round = 0; round < options.rounds; round += 1) {
    const order: [string, string][] = [['this build', thisBuild]];
    if (options.compare) order.push(['compared', options.compare]);
    if (round % 2 === 1) order.reverse();
    for (const [build, app] of order) runs.push(await runPipeline(pipeline, app, build));
  }
  return runs;
}

/** Figures of the baselines (absent with --skip-baselines). */
interface Baseline {
  rawMs?: number;
  bulkMs?: number;
  /** µs of CPU per observation: `bench` (the loader, this process), `postgres`, `machine`. */
  bulkCpu?: Record<string, number>;
}

const ratio = (a: number, b: number) => Number((a / b).toFixed(2));

/**
 * The pipeline's CPU per observation: change-detector, PostgreSQL (autovacuum included), the
 * broker and this process (the publisher). Set against the bulk loader's (loader + PostgreSQL):
 * what the pipeline's work costs over the loader's, a figure that holds when other work shares
 * the machine and the rates swing. (Not a bound on the rates' ratio: the loader is one stream of
 * COPYs and does not keep two cores busy.)
 */
function pipelineCpu(cpu: Record<string, number>): number {
  return ['change-detector', 'postgres', 'autovacuum', 'rabbitmq', 'bench'].reduce((sum, group) => sum + (cpu[group] ?? 0), 0);
}

/** The summary as JSON on standard output; the exit code (1: target missed). */
function report(
  options: Options,
  generated: Generated,
  baseline: Baseline,
  runs: RunResult[],
): number {
  const { observations, bodies, newest, bidCount } = generated;
  const { rawMs, bulkMs, bulkCpu } = baseline;
  const bulkCpuTotal = bulkCpu ? (bulkCpu.bench ?? 0) + (bulkCpu.postgres ?? 0) : undefined;
  const mine = runs.filter((r) => r.build === 'this build');
  const compared = runs.filter((r) => r.build === 'compared');
  const sustained = median(mine.map((r) => r.observations_per_s));
  const summary = {
    observations: observations.length,
    auctions: newest.size,
    bids: bidCount,
    batch_size: options.batchSize,
    concurrency: options.concurrency,
    observations_per_message: options.perMessage,
    messages: bodies.length,
    raw_publish_per_s: rawMs === undefined ? null : rate(bodies.length, rawMs),
    raw_publish_observations_per_s: rawMs === undefined ? null : rate(observations.length, rawMs),
    bulk_load_per_s: bulkMs === undefined ? null : rate(observations.length, bulkMs),
    bulk_load_ms: bulkMs ?? null,
    bulk_load_cpu_us_per_observation: bulkCpu ?? null,
    observations_per_s_vs_bulk_load: bulkMs === undefined ? null : ratio(sustained, rate(observations.length, bulkMs)),
    cpu_bulk_load_vs_pipeline:
      bulkCpuTotal === undefined ? null : ratio(bulkCpuTotal, median(mine.map((r) => pipelineCpu(r.cpu_us_per_observation)))),
    sustained_observations_per_s: sustained,
    this_build: summarize(mine),
    compared: compared.length > 0 ? { app: options.compare, ...summarize(compared) } : null,
    runs,
    bare_schema: options.bare,
    split_relay: options.splitRelay,
    queue_version_2: options.queueV2,
    prefill: options.prefill,
    target_per_s: TARGET,
    target_met: sustained >= TARGET,
    load_average: loadavg().map((l) => Number(l.toFixed(2))),
  };
  log(`sustained through RabbitMQ: ${sustained} obs/s (median of ${mine.length}; target ${TARGET})`);
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  return summary.target_met ? 0 : 1;
}

async function main(): Promise<number> {
  const options = commandLine('bench:ingest', USAGE, parseOptions);
  log(`${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const { databaseUrl, rabbitUrl, dataSource } = await setUp(options);
  try {
    await prepareSchema(options, dataSource);
    const generated = generate(options);
    const baseline = await baselines(options, dataSource, rabbitUrl, generated.observations, generated.bodies);
    const runs = await runRounds({
      options,
      dataSource,
      databaseUrl,
      rabbitUrl,
      bodies: generated.bodies,
      observations: generated.observations.length,
      newest: generated.newest,
      lastKeys: generated.lastKeys,
    });
    return report(options, generated, baseline, runs);
  } finally {
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
