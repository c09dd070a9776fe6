import 'reflect-metadata';
import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createAccount } from '@cars/accounts';
import { createDataSource } from '@cars/persistence';
import Redis from 'ioredis';
import { createVhost } from '@cars/testing';
import { Pool as PgPool } from 'pg';
import { booleanFlag, commandLine, integerFlag, numberFlag, parseFlags, stringFlag } from '../common/args';
import { CpuTally, pidsNamed } from '../common/cpu';
import { percentile } from '../common/latency';
import { BENCH_DATABASE, DatasetInfo, prepareDataset } from './dataset';
import { explain, ExplainedStatement } from './explain';
import { closedLoop, createClient, openLoop, Recorder, RunResult } from './load-generator';
import { buildMix, interleave, MixClass } from './mix';

/**
 * Query API benchmark:
 *
 *   npm run build && node dist/tools/bench/query/main.js [--auctions 1000000] [--live 1500] [--seed 1]
 *     [--reload] [--rate 100] [--seconds 30] [--concurrency 16] [--throughput-seconds 15] [--plans] [--metering]
 *
 * 1. Database `cars_bench_query` with N auctions from @cars/datagen, bulk-loaded by the
 *    change-detector's loader (reused when already loaded at the same size and seed).
 * 2. A fixed mix of request classes with values taken from the data (mix.ts); EXPLAIN ANALYZE of
 *    every statement the service runs for them (a sequential scan of `auctions` is a failure).
 * 3. The gateway app and the query app as their own processes over RabbitMQ (vhost
 *    `cars_bench_query`), auth and metering off (METERING_ENABLED=false); and, as the baseline,
 *    bare Fastify + pg running the same repositories and SQL (bare-server.ts), also its own process.
 * 4. Warm-up (every request once: primes the count caches), then an open-loop run at `rate`
 *    requests/s against each (latency from the scheduled send time), then a closed-loop run with
 *    `concurrency` callers against each for the maximum throughput; the ratio of each pair of
 *    slices is printed beside the run's, to show how far one run can be trusted.
 *
 *    With `--metering`, a second gateway with authentication, the Redis burst limit and the
 *    monthly ledger on (what customers use) joins the closed loop — one API key per caller, sent
 *    in turn — and its ratio to bare is printed beside the unmetered gateway's.
 *
 * 5. CPU per request of every process in the closed loop (gateway, query service, the run's own
 *    PostgreSQL backends, the RabbitMQ server; bare server and its backends), from /proc: robust
 *    to other work on the machine, unlike the throughput (docs/performance.md).
 *
 * Targets: every class p99 ≤ 50 ms at 100 req/s through the gateway, with exact meta.total;
 * gateway throughput ≥ 0.8 × bare. Exit code 1 when one is missed.
 * Servers: TEST_POSTGRES_ADMIN_URL and TEST_RABBITMQ_BASE_URL as the test suite uses them.
 */

interface Options {
  auctions: number;
  live: number;
  seed: string;
  reload: boolean;
  rate: number;
  seconds: number;
  concurrency: number;
  throughputSeconds: number;
  plans: boolean;
  metering: boolean;
}

const USAGE = `Usage: node dist/tools/bench/query/main.js [options]

  --auctions N              completed auctions in the data set (default 1000000)
  --live N                  live auctions (default 1500)
  --seed S                  data set seed (default "1")
  --reload                  regenerate the data set even when one of this size and seed is loaded
  --rate R                  requests/s of the open-loop run (default 100)
  --seconds S               length of the open-loop run (default 30)
  --concurrency N           callers of the closed-loop run (default 16)
  --throughput-seconds S    length of the closed-loop run (default 15)
  --plans                   print the plan of every statement
  --metering                also run the closed loop through a gateway with metering on (API keys,
                            Redis burst limit, monthly ledger) and print its ratio beside
  -h, --help                this text`;

function parseOptions(argv: readonly string[]): Options | 'help' {
  const flags = parseFlags(argv, {
    auctions: { type: 'string' },
    live: { type: 'string' },
    seed: { type: 'string' },
    reload: { type: 'boolean' },
    rate: { type: 'string' },
    seconds: { type: 'string' },
    concurrency: { type: 'string' },
    'throughput-seconds': { type: 'string' },
    plans: { type: 'boolean' },
    metering: { type: 'boolean' },
  });
  if (flags === 'help') return 'help';
  return {
    auctions: integerFlag(flags, 'auctions', 1_000_000, 1),
    live: integerFlag(flags, 'live', 1500),
    seed: stringFlag(flags, 'seed', '1'),
    reload: booleanFlag(flags, 'reload'),
    rate: numberFlag(flags, 'rate', 100, 'positive'),
    seconds: numberFlag(flags, 'seconds', 30, 'positive'),
    concurrency: integerFlag(flags, 'concurrency', 16, 1),
    throughputSeconds: numberFlag(flags, 'throughput-seconds', 15, 'positive'),
    plans: booleanFlag(flags, 'plans'),
    metering: booleanFlag(flags, 'metering'),
  };
}

const P99_TARGET_MS = 50;
const SLICE = 5;
const RATIO_TARGET = 0.8;
const log = (message: string) => process.stderr.write(`bench:query ${message}\n`);
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  server.close();
  return port;
}

/** Node flags for the servers, e.g. BENCH_CHILD_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile them. */
const CHILD_NODE_ARGS = (process.env.BENCH_CHILD_NODE_ARGS ?? '').split(' ').filter(Boolean);

function start(script: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [...CHILD_NODE_ARGS, script], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  child.stdout?.resume();
  return child;
}

async function waitReady(url: string, child: ChildProcess, what: string): Promise<void> {
  for (let i = 0; i < 600; i += 1) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode})`);
    try {
      const res = await fetch(url);
      await res.text();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${what} did not become ready`);
}

function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.pid === undefined) return Promise.resolve();
  const exited = once(child, 'exit').then(() => undefined);
  child.kill('SIGTERM');
  return Promise.race([exited, sleep(5000).then(() => void child.kill('SIGKILL'))]);
}

const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));

function latencyTable(classes: MixClass[], gateway: RunResult, bare: RunResult): string[] {
  const lines = [
    `${'class'.padEnd(20)} ${'gateway p50'.padStart(11)} ${'p99'.padStart(7)} ${'max'.padStart(7)} ${'req/s'.padStart(6)} ${'err'.padStart(4)}` +
      ` | ${'bare p50'.padStart(8)} ${'p99'.padStart(7)} ${'req/s'.padStart(6)} | ${'p99 ≤ 50'.padStart(8)}`,
  ];
  for (const c of classes) {
    const g = gateway.classes.find((x) => x.name === c.name)!;
    const b = bare.classes.find((x) => x.name === c.name)!;
    lines.push(
      `${c.name.padEnd(20)} ${fmt(g.p50).padStart(11)} ${fmt(g.p99).padStart(7)} ${fmt(g.max).padStart(7)} ${fmt(g.throughput).padStart(6)} ${String(g.errors).padStart(4)}` +
        ` | ${fmt(b.p50).padStart(8)} ${fmt(b.p99).padStart(7)} ${fmt(b.throughput).padStart(6)} | ${(g.p99 <= P99_TARGET_MS && g.errors === 0 ? 'ok' : 'MISSED').padStart(8)}`,
    );
  }
  lines.push(
    `${'all'.padEnd(20)} ${''.padStart(11)} ${''.padStart(7)} ${''.padStart(7)} ${fmt(gateway.throughput).padStart(6)} ${String(gateway.errors).padStart(4)}` +
      ` | ${''.padStart(8)} ${''.padStart(7)} ${fmt(bare.throughput).padStart(6)} |`,
  );
  return lines;
}

function throughputTable(classes: MixClass[], gateway: RunResult, bare: RunResult): string[] {
  const lines = [
    `${'class'.padEnd(20)} ${'gateway req/s'.padStart(13)} ${'p50'.padStart(7)} ${'p99'.padStart(7)} | ${'bare req/s'.padStart(10)} ${'p50'.padStart(7)} ${'p99'.padStart(7)} | ${'ratio'.padStart(5)}`,
  ];
  for (const c of classes) {
    const g = gateway.classes.find((x) => x.name === c.name)!;
    const b = bare.classes.find((x) => x.name === c.name)!;
    lines.push(
      `${c.name.padEnd(20)} ${fmt(g.throughput).padStart(13)} ${fmt(g.p50).padStart(7)} ${fmt(g.p99).padStart(7)} | ${fmt(b.throughput).padStart(10)} ${fmt(b.p50).padStart(7)} ${fmt(b.p99).padStart(7)} | ${(g.throughput / b.throughput).toFixed(2).padStart(5)}`,
    );
  }
  lines.push(
    `${'all'.padEnd(20)} ${fmt(gateway.throughput).padStart(13)} ${''.padStart(7)} ${''.padStart(7)} | ${fmt(bare.throughput).padStart(10)} ${''.padStart(7)} ${''.padStart(7)} | ${(gateway.throughput / bare.throughput).toFixed(2).padStart(5)}`,
  );
  return lines;
}

/** Database connections of the run by application name (the services name their pools). */
async function backends(pool: PgPool, database: string): Promise<Map<string, number[]>> {
  const { rows } = await pool.query<{ name: string; pid: number }>(
    'SELECT application_name AS name, pid FROM pg_stat_activity WHERE datname = $1',
    [database],
  );
  const out = new Map<string, number[]>();
  for (const row of rows) out.set(row.name, [...(out.get(row.name) ?? []), row.pid]);
  return out;
}

const GATEWAY_BACKENDS = ['gateway', 'query'];
const BARE_BACKENDS = ['bench-query-bare'];

/**
 * µs of CPU per request by process: what the machine spends on one request whatever else runs on
 * it (throughput on a shared machine is not). RabbitMQ's share is its whole server's, other users
 * of the broker included: an upper bound when the broker is shared.
 */
function cpuTable(gateway: Record<string, number>, bare: Record<string, number>): string[] {
  const cell = (v: number | undefined) => (v === undefined ? '' : v.toFixed(0)).padStart(8);
  const names = ['gateway', 'query', 'bare', 'postgres', 'rabbitmq', 'total'];
  return [
    `${'µs CPU / request'.padEnd(20)} ${names.map((n) => n.padStart(8)).join(' ')}`,
    `${'gateway path'.padEnd(20)} ${names.map((n) => cell(gateway[n])).join(' ')}`,
    `${'bare'.padEnd(20)} ${names.map((n) => cell(bare[n])).join(' ')}`,
  ];
}

interface ExplainedPath {
  class: string;
  path: string;
  statements: ExplainedStatement[];
}

/** Plans of every statement of every request variant, and the ones that scan auctions sequentially. */
async function explainMix(databaseUrl: string, classes: MixClass[]): Promise<{ plans: ExplainedPath[]; seqScans: string[] }> {
  const pg = new PgPool({ connectionString: databaseUrl, max: 2 });
  const plans: ExplainedPath[] = [];
  for (const c of classes) {
    for (const path of c.paths) plans.push({ class: c.name, path, statements: await explain(pg, path) });
  }
  await pg.end();
  const seqScans = plans.flatMap((p) => p.statements.filter((s) => s.seqScanOnAuctions).map((s) => `${p.path} [${s.label}]`));
  return { plans, seqScans };
}

/** Every distinct request of the mix once (the warm-up). */
const distinct = (all: MixClass[]) => [...new Set(interleave(all).map((r) => r.path))].map((path) => ({ name: 'warm-up', path }));

/** The query service and the gateway over RabbitMQ, and the bare server beside them. */
interface Servers {
  query?: ChildProcess;
  gateway?: ChildProcess;
  bare?: ChildProcess;
  /** `--metering`: the gateway with metering on, and one API key per caller. */
  metered?: ChildProcess;
  meteredUrl?: string;
  apiKeys?: string[];
  gatewayUrl: string;
  bareUrl: string;
}

const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const BENCH_EMAILS = `bench-query-${process.pid}-%@example.test`;

/** `--metering`: a gateway with metering on beside the other one, and `concurrency` accounts (100K plan) with a key each. */
async function startMeteredGateway(databaseUrl: string, rabbitUrl: string, options: Options, servers: Servers): Promise<void> {
  const pool = new PgPool({ connectionString: databaseUrl, max: 1 });
  try {
    servers.apiKeys = [];
    for (let i = 0; i < options.concurrency; i += 1) {
      const { key } = await createAccount(pool, { email: BENCH_EMAILS.replace('%', String(i)), plan: '100k', emailVerified: true });
      servers.apiKeys.push(key.apiKey);
    }
  } finally {
    await pool.end();
  }
  const port = await freePort();
  servers.metered = start(join(__dirname, '../../../apps/gateway/src/main.js'), {
    DATABASE_URL: databaseUrl,
    RABBITMQ_URL: rabbitUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    METERING_ENABLED: 'true',
    DATABASE_POOL_SIZE: '2',
    REDIS_URL,
    REDIS_KEY_PREFIX: `cars-bench-query:${process.pid}:`,
    // The burst limit is on the path (one Redis script per request) but must not refuse the bench.
    BURST_RATE_PER_SECOND: '100000',
    BURST_CAPACITY: '100000',
  });
  servers.meteredUrl = `http://127.0.0.1:${port}`;
}

/** The bench's accounts (their keys, ledger rows and leases go with them) and Redis buckets. */
async function removeMeteringState(databaseUrl: string): Promise<void> {
  const pool = new PgPool({ connectionString: databaseUrl, max: 1 });
  await pool.query(`DELETE FROM accounts WHERE email LIKE $1`, [BENCH_EMAILS.replace('%', '%')]).finally(() => pool.end());
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    const keys = await redis.keys(`cars-bench-query:${process.pid}:*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

async function startServers(databaseUrl: string, servers: Servers, options: Options): Promise<void> {
  const rabbitUrl = createVhost(BENCH_DATABASE);
  const gatewayPort = await freePort();
  const barePort = await freePort();
  const dist = join(__dirname, '../../..');
  servers.query = start(join(dist, 'apps/query/src/main.js'), {
    DATABASE_URL: databaseUrl,
    RABBITMQ_URL: rabbitUrl,
    HEALTH_PORT: '0',
    DATABASE_POOL_SIZE: '10',
    // As the bare baseline, no statement timeout short of an uncached count: the broad keyword's
    // count takes seconds (4.5 s on the 2-core machine) and a stopped one is never cached, so the
    // gateway path would count it again on every request.
    QUERY_STATEMENT_TIMEOUT_MS: '60000',
  });
  servers.gateway = start(join(dist, 'apps/gateway/src/main.js'), {
    DATABASE_URL: databaseUrl,
    RABBITMQ_URL: rabbitUrl,
    PORT: String(gatewayPort),
    HOST: '127.0.0.1',
    METERING_ENABLED: 'false',
    DATABASE_POOL_SIZE: '2',
  });
  servers.bare = start(join(__dirname, 'bare-server.js'), {
    DATABASE_URL: databaseUrl,
    PORT: String(barePort),
    DATABASE_POOL_SIZE: '10',
  });
  servers.gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  servers.bareUrl = `http://127.0.0.1:${barePort}`;
  if (options.metering) await startMeteredGateway(databaseUrl, rabbitUrl, options, servers);
}

interface Measurements {
  gatewayOpen: RunResult;
  bareOpen: RunResult;
  gatewayMax: RunResult;
  bareMax: RunResult;
  /** `--metering`: the closed loop through the metered gateway. */
  meteredMax?: RunResult;
  cpu: { gateway: ReturnType<CpuTally['perUnit']>; bare: ReturnType<CpuTally['perUnit']> };
  /** Gateway ÷ bare throughput of each pair of closed-loop slices, in order: the spread within the run. */
  pairRatios: number[];
}

/**
 * Warm-up, then the open loop and the closed loop, gateway and bare alternating in slices of
 * SLICE seconds (the machine is shared: both see the same background load); CPU per request of
 * the closed loop.
 */
async function measure(options: Options, databaseUrl: string, classes: MixClass[], servers: Servers): Promise<Measurements> {
  const { gateway, query, bare, gatewayUrl, bareUrl } = servers;
  const activity = new PgPool({ connectionString: databaseUrl, max: 1, application_name: 'bench-query' });
  const pick = (all: Map<string, number[]>, names: string[]) => names.flatMap((n) => all.get(n) ?? []);
  const gatewayCpu = new CpuTally(async () => ({
    gateway: [gateway!.pid!],
    query: [query!.pid!],
    postgres: pick(await backends(activity, BENCH_DATABASE), GATEWAY_BACKENDS),
    rabbitmq: pidsNamed('beam.smp'),
  }));
  const bareCpu = new CpuTally(async () => ({
    bare: [bare!.pid!],
    postgres: pick(await backends(activity, BENCH_DATABASE), BARE_BACKENDS),
  }));
  await waitReady(`${gatewayUrl}/auctions?limit=1`, gateway!, 'gateway + query service');
  await waitReady(`${bareUrl}/auctions?limit=1`, bare!, 'bare server');
  const meteredClient = servers.meteredUrl ? createClient(servers.meteredUrl, 64, servers.apiKeys) : undefined;
  if (meteredClient) {
    await waitReady(`${servers.meteredUrl}/health/ready`, servers.metered!, 'gateway with metering');
    for (const r of distinct(classes)) await meteredClient.request({ method: 'GET', path: r.path, headers: { authorization: `Bearer ${servers.apiKeys![0]}` } }).then((res) => res.body.text());
  }
  log(`gateway ${gatewayUrl} (query service over RabbitMQ), bare ${bareUrl}; load average ${load()}`);

  const mix = interleave(classes);
  const gatewayClient = createClient(gatewayUrl);
  const bareClient = createClient(bareUrl);
  // Warm-up: each request once (the first count of a filter set is the uncached one), then a short run.
  for (const r of distinct(classes)) {
    await gatewayClient.request({ method: 'GET', path: r.path }).then((res) => res.body.text());
    await bareClient.request({ method: 'GET', path: r.path }).then((res) => res.body.text());
  }
  const order = classes.map((c) => c.name);
  await openLoop(gatewayClient, mix, options.rate, 5, new Recorder(order));
  await openLoop(bareClient, mix, options.rate, 5, new Recorder(order));

  const slices = Math.max(1, Math.round(options.seconds / SLICE));
  log(`open loop at ${options.rate} req/s, ${slices} × ${SLICE} s each, alternating (load average ${load()})`);
  const gatewayOpenRec = new Recorder(order);
  const bareOpenRec = new Recorder(order);
  for (let i = 0, g = 0, b = 0; i < slices; i += 1) {
    g = await openLoop(gatewayClient, mix, options.rate, SLICE, gatewayOpenRec, g);
    b = await openLoop(bareClient, mix, options.rate, SLICE, bareOpenRec, b);
  }
  const throughputSlices = Math.max(1, Math.round(options.throughputSeconds / SLICE));
  log(`closed loop, ${options.concurrency} callers, ${throughputSlices} × ${SLICE} s each, alternating (load average ${load()})`);
  const gatewayMaxRec = new Recorder(order);
  const bareMaxRec = new Recorder(order);
  const meteredMaxRec = new Recorder(order);
  const pairRatios: number[] = [];
  for (let i = 0, g = 0, b = 0, m = 0; i < throughputSlices; i += 1) {
    // With metering, its slice comes first in odd slices and last in even ones (paired with both).
    if (meteredClient && i % 2 === 1) m = await closedLoop(meteredClient, mix, options.concurrency, SLICE, meteredMaxRec, m);
    const gatewayBefore = sliceMark(gatewayMaxRec);
    await gatewayCpu.start();
    g = await closedLoop(gatewayClient, mix, options.concurrency, SLICE, gatewayMaxRec, g);
    await gatewayCpu.stop();
    const bareBefore = sliceMark(bareMaxRec);
    await bareCpu.start();
    b = await closedLoop(bareClient, mix, options.concurrency, SLICE, bareMaxRec, b);
    await bareCpu.stop();
    pairRatios.push(sliceThroughput(gatewayMaxRec, gatewayBefore) / sliceThroughput(bareMaxRec, bareBefore));
    if (meteredClient && i % 2 === 0) m = await closedLoop(meteredClient, mix, options.concurrency, SLICE, meteredMaxRec, m);
  }
  await activity.end();
  const [gatewayOpen, bareOpen, gatewayMax, bareMax] = [gatewayOpenRec, bareOpenRec, gatewayMaxRec, bareMaxRec].map((r) => r.result());
  const cpu = { gateway: gatewayCpu.perUnit(gatewayMax.total), bare: bareCpu.perUnit(bareMax.total) };
  await gatewayClient.close();
  await bareClient.close();
  await meteredClient?.close();
  return { gatewayOpen, bareOpen, gatewayMax, bareMax, cpu, pairRatios, ...(meteredClient ? { meteredMax: meteredMaxRec.result() } : {}) };
}

/** Where a recorder stands before a slice: its samples and seconds so far. */
function sliceMark(recorder: Recorder): { samples: number; seconds: number } {
  return { samples: recorder.samples.length, seconds: recorder.seconds };
}

/** Requests/s of the slice recorded since `mark`. */
function sliceThroughput(recorder: Recorder, mark: { samples: number; seconds: number }): number {
  return (recorder.samples.length - mark.samples) / (recorder.seconds - mark.seconds);
}


/** The tables, the targets and the JSON line on standard output; the exit code (1: a target missed). */
function report(
  options: Options,
  dataset: DatasetInfo,
  mix: { classes: MixClass[]; notes: string[] },
  explained: { plans: ExplainedPath[]; seqScans: string[] },
  m: Measurements,
): number {
  const { classes, notes } = mix;
  const { plans, seqScans } = explained;
  const { gatewayOpen, bareOpen, gatewayMax, bareMax, cpu, pairRatios } = m;
  const out: string[] = [];
  out.push(
    `Query benchmark: ${dataset.auctions} auctions (${dataset.live} live), ${dataset.bids} bids; ` +
      `${cpus().length} CPUs; load average at the end ${load()} (machine shared with other work)`,
  );
  out.push('', 'Request mix:');
  for (const c of classes) out.push(`  ${c.name.padEnd(20)} ${c.description}: ${c.paths.join('  ')}`);
  for (const note of notes) out.push(`  · ${note}`);
  out.push(
    '',
    `Latency in ms at ${options.rate} req/s (open loop, ${options.seconds} s each in alternating ${SLICE} s slices, from the scheduled send time):`,
  );
  out.push(...latencyTable(classes, gatewayOpen, bareOpen));
  out.push('', `Maximum throughput (closed loop, ${options.concurrency} callers, ${options.throughputSeconds} s each in alternating ${SLICE} s slices):`);
  out.push(...throughputTable(classes, gatewayMax, bareMax));
  if (m.meteredMax) {
    out.push('', `With metering on (API key per caller, Redis burst limit, monthly ledger), the same closed loop in the same alternating slices:`);
    out.push(...throughputTable(classes, m.meteredMax, bareMax));
  }
  out.push('', `CPU per request in the closed loop (µs, user + system, from /proc; PostgreSQL: the run's own backends):`);
  out.push(...cpuTable(cpu.gateway, cpu.bare));
  out.push('', 'Statements per request (EXPLAIN ANALYZE; "count (uncached)" is what a count-cache miss costs):');
  for (const p of plans) {
    const timings = p.statements.map((s) => `${s.label} ${s.ms.toFixed(2)} ms${s.seqScanOnAuctions ? ' SEQ SCAN' : ''}`).join(', ');
    out.push(`  ${p.class.padEnd(20)} ${p.path}\n  ${''.padEnd(20)} ${timings}`);
    if (options.plans) for (const s of p.statements) out.push(`--- ${s.label}\n${s.plan}`);
  }
  const failures = [...gatewayOpen.failures, ...gatewayMax.failures, ...bareOpen.failures, ...bareMax.failures];
  if (failures.length) out.push('', 'Unexpected answers:', ...failures.map((f) => `  ${f}`));

  const missed = gatewayOpen.classes.filter((c) => c.p99 > P99_TARGET_MS || c.errors > 0).map((c) => c.name);
  const ratio = gatewayMax.throughput / bareMax.throughput;
  out.push('');
  out.push(`p99 ≤ ${P99_TARGET_MS} ms at ${options.rate} req/s, every class: ${missed.length ? `MISSED (${missed.join(', ')})` : 'ok'}`);
  out.push(`gateway/bare throughput ${ratio.toFixed(2)} (target ≥ ${RATIO_TARGET}): ${ratio >= RATIO_TARGET ? 'ok' : 'MISSED'}`);
  out.push(
    `  by pair of ${SLICE} s slices: ${pairRatios.map((r) => r.toFixed(2)).join(' ')} (median ${percentile([...pairRatios].sort((a, b) => a - b), 50).toFixed(2)}, ` +
      `min ${Math.min(...pairRatios).toFixed(2)}, max ${Math.max(...pairRatios).toFixed(2)})`,
  );
  const meteredRatio = m.meteredMax ? m.meteredMax.throughput / bareMax.throughput : undefined;
  if (meteredRatio !== undefined) {
    out.push(`gateway with metering/bare throughput ${meteredRatio.toFixed(2)} (without metering ${ratio.toFixed(2)}; metered/unmetered ${(m.meteredMax!.throughput / gatewayMax.throughput).toFixed(2)})`);
  }
  out.push(`sequential scans of auctions: ${seqScans.length ? seqScans.join('; ') : 'none'}`);
  console.log(out.join('\n'));
  console.log(
    JSON.stringify({
      dataset,
      rate: options.rate,
      gateway: { open: gatewayOpen, max: gatewayMax },
      bare: { open: bareOpen, max: bareMax },
      ratio,
      pairRatios,
      ...(m.meteredMax ? { metered: { max: m.meteredMax }, meteredRatio } : {}),
      cpu,
      seqScans,
      load: loadavg(),
    }),
  );
  return missed.length === 0 && ratio >= RATIO_TARGET && seqScans.length === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  const options = commandLine('bench:query', USAGE, parseOptions);
  log(`${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), load average ${load()}`);
  const dataset = await prepareDataset(options);

  const db = await createDataSource({ url: dataset.databaseUrl, poolSize: 2, applicationName: 'bench-query' }).initialize();
  const mix = await buildMix(db);
  await db.destroy();
  for (const note of mix.notes) log(`mix: ${note}`);
  const explained = await explainMix(dataset.databaseUrl, mix.classes);

  const servers: Servers = { gatewayUrl: '', bareUrl: '' };
  try {
    await startServers(dataset.databaseUrl, servers, options);
    const measured = await measure(options, dataset.databaseUrl, mix.classes, servers);
    return report(options, dataset, mix, explained, measured);
  } finally {
    await Promise.all([stop(servers.gateway), stop(servers.query), stop(servers.bare), stop(servers.metered)]);
    if (options.metering) await removeMeteringState(dataset.databaseUrl);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
