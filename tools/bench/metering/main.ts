import 'reflect-metadata';
import { ChildProcess, spawn } from 'node:child_process';
import { freePort } from '@cars/runtime';
import { summarize } from '../common/latency';
import { CpuTally, pidsNamed } from '../common/cpu';
import { booleanFlag, commandLine, integerFlag, parseFlags } from '../common/args';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import Redis from 'ioredis';
import { Pool } from 'undici';
import { createAccount, getUsage } from '@cars/accounts';
import { createDataSource, pgPoolOf, runMigrations } from '@cars/persistence';
import { adminQuery, createVhost, databaseUrlFor, deleteVhost } from '@cars/testing';
import { DataSource } from 'typeorm';

/**
 * What API access costs a counted request (docs/api/accounts.md, "Benchmark"):
 *
 *   npm run build && node dist/tools/bench/metering/main.js [--requests 3000] [--warmup 300]
 *     [--concurrency 16] [--duration 5] [--rounds 3] [--keep]
 *
 * The query service and two gateways run as separate processes over one database and RabbitMQ
 * vhost: one gateway with authentication, the Redis burst limit and the PostgreSQL monthly
 * ledger on (METERING_ENABLED=true), one with them off (METERING_ENABLED=false). The same
 * counted request (GET /auctions?limit=1) is sent to both, sequentially and interleaved
 * (on, off, off, on, …) so drift of the machine hits both alike; then p50/p99 of each and the
 * difference. Then concurrent autocannon runs for throughput, one account per connection: an
 * unmeasured warm-up of 2 s against each, then runs paired the same way: `rounds` rounds of
 * (on, off) or (off, on), alternating, so both see the same machine; the ratio is the metered runs' requests over the unmetered runs'. The ledger must show
 * exactly the counted requests sent to the metered gateway, sequentially and under load.
 *
 * Targets: the sequential p50 difference ≤ 0.3 ms; the concurrent ratio ≥ 0.9. Exit code 1 when
 * one is missed or a check fails.
 * Profiles of the apps: BENCH_CHILD_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof".
 * Servers: TEST_POSTGRES_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres),
 * TEST_RABBITMQ_BASE_URL (amqp://guest:guest@127.0.0.1:5672), BENCH_REDIS_URL (redis://127.0.0.1:6379).
 */

const NAME = 'cars_bench_metering';
const TARGET_P50_DIFF_MS = 0.3;
const TARGET_RATIO = 0.9;
const PATH = '/auctions?limit=1';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Options {
  requests: number;
  warmup: number;
  concurrency: number;
  duration: number;
  rounds: number;
  /** Requests/s each connection sends (paced, like many slow clients), or undefined: as fast as answered. */
  connectionRate?: number;
  keep: boolean;
}

const USAGE = `Usage: node dist/tools/bench/metering/main.js [options]

  --requests N       sequential requests measured against each gateway (default 3000)
  --warmup N         warm-up requests to each gateway (default 300)
  --concurrency N    connections of the concurrent run (default 16)
  --duration S       seconds of each concurrent run (default 5)
  --rounds N         paired concurrent rounds, on/off order alternating (default 3)
  --connection-rate R  each connection sends R requests/s (many slow clients: compare CPU and
                     ledger statements per request; the throughput ratio is then no target)
  --keep             keep the database and vhost afterwards
  -h, --help         this text`;

function parseOptions(argv: readonly string[]): Options | 'help' {
  const flags = parseFlags(argv, {
    requests: { type: 'string' },
    warmup: { type: 'string' },
    concurrency: { type: 'string' },
    duration: { type: 'string' },
    rounds: { type: 'string' },
    'connection-rate': { type: 'string' },
    keep: { type: 'boolean' },
  });
  if (flags === 'help') return 'help';
  return {
    requests: integerFlag(flags, 'requests', 3000),
    warmup: integerFlag(flags, 'warmup', 300),
    concurrency: integerFlag(flags, 'concurrency', 16),
    duration: integerFlag(flags, 'duration', 5, 1),
    rounds: integerFlag(flags, 'rounds', 3, 1),
    connectionRate: flags['connection-rate'] === undefined ? undefined : integerFlag(flags, 'connection-rate', 1, 1),
    keep: booleanFlag(flags, 'keep'),
  };
}

const log = (message: string) => console.error(`[bench:metering] ${message}`);



/** Node flags for the apps, e.g. BENCH_CHILD_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile them. */
const CHILD_NODE_ARGS = (process.env.BENCH_CHILD_NODE_ARGS ?? '').split(' ').filter(Boolean);

function startApp(name: string, env: Record<string, string>): ChildProcess {
  const main = join(__dirname, '../../../apps', name, 'src/main.js');
  return spawn(process.execPath, [...CHILD_NODE_ARGS, main], { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
}

async function stopApp(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

/** One keep-alive connection, like a client polling the API. */
class Http {
  private readonly pool: Pool;

  constructor(
    readonly origin: string,
    private readonly headers: Record<string, string>,
  ) {
    this.pool = new Pool(origin, { connections: 1, pipelining: 1 });
  }

  async get(path: string): Promise<number> {
    const res = await this.pool.request({ path, method: 'GET', headers: this.headers });
    await res.body.text();
    return res.statusCode;
  }

  async waitUntilAnswering(path: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = 0;
    while (Date.now() < deadline) {
      last = await this.get(path).catch(() => 0);
      if (last === 200) return;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`${this.origin}${path} not answering 200 after ${timeoutMs} ms (last: ${last})`);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

async function timed(http: Http, path: string): Promise<number> {
  const started = performance.now();
  const status = await http.get(path);
  const elapsed = performance.now() - started;
  if (status !== 200) throw new Error(`GET ${http.origin}${path} → ${status}`);
  return elapsed;
}

/** Many clients at once, each with a key of its own (one account per connection, as in real traffic). */
async function concurrent(origin: string, keys: string[], options: Options) {
  let next = 0;
  const result = await autocannon({
    url: `${origin}${PATH}`,
    connections: options.concurrency,
    duration: options.duration,
    ...(options.connectionRate ? { connectionRate: options.connectionRate } : {}),
    setupClient: (client) => {
      client.setHeaders({ authorization: `Bearer ${keys[next++ % keys.length]}` });
    },
  });
  // The statuses other than 2xx, e.g. "429×3 503×1" (empty when none).
  const statuses = Object.entries(result.statusCodeStats ?? {})
    .filter(([code]) => !code.startsWith('2'))
    .map(([code, stat]) => `${code}×${stat.count}`)
    .join(' ');
  return {
    rps: result.requests.average,
    total: result.requests.total,
    ok: result['2xx'],
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx + (statuses ? ` (${statuses})` : ''),
  };
}

type LoadRun = Awaited<ReturnType<typeof concurrent>>;

/** The metered gateway's ledger statements so far, by kind (`gateway_metering_ledger_statements_total`). */
async function ledgerStatements(origin: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const counts = new Map<string, number>();
  for (const match of text.matchAll(/^gateway_metering_ledger_statements_total\{statement="(\w+)"\} (\d+)/gm)) {
    counts.set(match[1], Number(match[2]));
  }
  return counts;
}

/** Seconds of concurrent load each gateway gets, unmeasured, before the paired rounds. */
const LOAD_WARMUP_SECONDS = 2;

/**
 * Concurrent runs against both gateways, paired: (on, off), (off, on), … — each round's two runs —
 * after a warm-up of each under the same load (the sequential phase warms one connection only).
 * The metered warm-up's 2xx are returned too: the ledger counts them.
 */
async function pairedLoad(
  on: string,
  off: string,
  keys: string[],
  options: Options,
  cpu: { on: CpuTally; off: CpuTally },
): Promise<{ rounds: { on: LoadRun; off: LoadRun }[]; warmupOk: number }> {
  const measured = async (side: 'on' | 'off') => {
    await cpu[side].start();
    const run = await concurrent(side === 'on' ? on : off, keys, options);
    await cpu[side].stop();
    return run;
  };
  log(`concurrent warm-up: ${options.concurrency} connections for ${LOAD_WARMUP_SECONDS} s against each`);
  const warmup = { ...options, duration: LOAD_WARMUP_SECONDS };
  const warmupOk = (await concurrent(on, keys, warmup)).ok;
  await concurrent(off, keys, warmup);
  const rounds: { on: LoadRun; off: LoadRun }[] = [];
  for (let round = 0; round < options.rounds; round += 1) {
    log(`concurrent round ${round + 1}/${options.rounds}: ${options.concurrency} connections for ${options.duration} s against each`);
    if (round % 2 === 0) {
      const a = await measured('on');
      rounds.push({ on: a, off: await measured('off') });
    } else {
      const b = await measured('off');
      rounds.push({ off: b, on: await measured('on') });
    }
  }
  return { rounds, warmupOk };
}

/**
 * The load accounts' ledger after the metered runs, once nothing is held (leases returned): the
 * units used are the 2xx the runs received, plus at most the responses each cut-off run left on
 * the wire (autocannon stops mid-request; the gateway may already have counted those).
 */
async function checkLoadLedger(db: DataSource, accountIds: string[], load: Awaited<ReturnType<typeof pairedLoad>>, options: Options) {
  const received = load.warmupOk + load.rounds.reduce((sum, r) => sum + r.on.ok, 0);
  const { used, reserved } = await heldReleased(db, accountIds, 15000);
  const slack = options.concurrency * (options.rounds + 1);
  return { used, reserved, received, slack, ok: reserved === 0 && used >= received && used - received <= slack };
}

async function deleteRedisPrefix(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
  } finally {
    redis.disconnect();
  }
}

const ms = (value: number) => `${value.toFixed(2)} ms`;

/** The measured account (its key authenticates the sequential phase) and one key per concurrent connection. */
async function createAccounts(
  db: DataSource,
  options: Options,
): Promise<{ accountId: string; auth: Record<string, string>; loadKeys: string[]; loadAccounts: string[] }> {
  const { account, key } = await createAccount(pgPoolOf(db), { email: 'bench@example.test', plan: '100k', emailVerified: true });
  const loadKeys: string[] = [];
  const loadAccounts: string[] = [];
  for (let i = 0; i < options.concurrency; i += 1) {
    const created = await createAccount(pgPoolOf(db), { email: `bench-${i}@example.test`, plan: '100k', emailVerified: true });
    loadKeys.push(created.key.apiKey);
    loadAccounts.push(created.account.id);
  }
  return { accountId: account.id, auth: { authorization: `Bearer ${key.apiKey}` }, loadKeys, loadAccounts };
}

/** The query service and two gateways, metering on and off (pushed to `apps` as they start); their origins. */
async function startApps(databaseUrl: string, rabbitUrl: string, redisPrefix: string, apps: ChildProcess[]): Promise<{ onOrigin: string; offOrigin: string }> {
  const [onPort, offPort] = [await freePort(), await freePort()];
  const common = { DATABASE_URL: databaseUrl, RABBITMQ_URL: rabbitUrl, HOST: '127.0.0.1', HEALTH_PORT: '0' };
  apps.push(startApp('query', common));
  apps.push(
    startApp('gateway', {
      ...common,
      PORT: String(onPort),
      METERING_ENABLED: 'true',
      REDIS_URL,
      REDIS_KEY_PREFIX: redisPrefix,
      // The burst limit is on the path (one Redis script per request) but must not refuse the bench.
      BURST_RATE_PER_SECOND: '100000',
      BURST_CAPACITY: '100000',
    }),
  );
  apps.push(startApp('gateway', { ...common, PORT: String(offPort), METERING_ENABLED: 'false' }));
  return { onOrigin: `http://127.0.0.1:${onPort}`, offOrigin: `http://127.0.0.1:${offPort}` };
}

/** Warm-up, then sequential requests to each gateway, interleaved; each one's latencies. */
async function sequential(on: Http, off: Http, options: Options): Promise<{ on: number[]; off: number[] }> {
  log(`warm-up: ${options.warmup} requests to each gateway`);
  for (let i = 0; i < options.warmup; i += 1) {
    await timed(on, PATH);
    await timed(off, PATH);
  }
  log(`measuring: ${options.requests} sequential requests to each, interleaved`);
  const samples = { on: [] as number[], off: [] as number[] };
  for (let i = 0; i < options.requests; i += 1) {
    if (i % 2 === 0) {
      samples.on.push(await timed(on, PATH));
      samples.off.push(await timed(off, PATH));
    } else {
      samples.off.push(await timed(off, PATH));
      samples.on.push(await timed(on, PATH));
    }
  }
  return samples;
}

/** Polls the accounts' ledger rows until nothing is held (in flight, or leased by a gateway and unspent); their sums. */
async function heldReleased(db: DataSource, accountIds: string[], timeoutMs: number): Promise<{ used: number; reserved: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const usages = await Promise.all(accountIds.map((id) => getUsage(pgPoolOf(db), id)));
    const sum = { used: usages.reduce((n, u) => n + u.used, 0), reserved: usages.reduce((n, u) => n + u.reserved, 0) };
    if (sum.reserved === 0 || Date.now() > deadline) return sum;
  }
}

/** The ledger after the sequential phase: every counted request used, nothing left reserved. */
async function checkLedger(db: DataSource, accountId: string, options: Options): Promise<{ usage: { used: number; reserved: number }; counted: number; ledgerOk: boolean }> {
  const counted = 1 + options.warmup + options.requests; // + the readiness probe that answered 200
  const usage = await heldReleased(db, [accountId], 15000);
  return { usage, counted, ledgerOk: usage.used === counted && usage.reserved === 0 };
}

/** The figures on standard output; the exit code (1: a target missed or the ledger wrong). */
function report(
  options: Options,
  samples: { on: number[]; off: number[] },
  rounds: { on: LoadRun; off: LoadRun }[],
  ledger: Awaited<ReturnType<typeof checkLedger>>,
  loadLedger: Awaited<ReturnType<typeof checkLoadLedger>>,
  cpu: { on: CpuTally; off: CpuTally },
  statements: { before: Map<string, number>; after: Map<string, number> },
): number {
  const { usage, counted, ledgerOk } = ledger;
  const a = summarize(samples.on);
  const b = summarize(samples.off);
  const diff = { p50: a.p50 - b.p50, p99: a.p99 - b.p99 };
  const total = (side: 'on' | 'off') => rounds.reduce((sum, r) => sum + r[side].rps, 0);
  const ratio = total('on') / total('off');
  // Paced connections send what they send whatever the gateway: their throughput ratio is no target.
  const paced = options.connectionRate !== undefined;
  const pass = diff.p50 <= TARGET_P50_DIFF_MS && (paced || ratio >= TARGET_RATIO) && ledgerOk && loadLedger.ok;

  console.log(`\nGET ${PATH} (counted) — ${cpus().length} CPUs, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`sequential, one keep-alive connection, ${options.requests} requests each (interleaved):`);
  console.log(`  metering on  (auth + Redis burst + ledger): p50 ${ms(a.p50)}  p99 ${ms(a.p99)}  mean ${ms(a.mean)}`);
  console.log(`  metering off (METERING_ENABLED=false):      p50 ${ms(b.p50)}  p99 ${ms(b.p99)}  mean ${ms(b.mean)}`);
  console.log(`  difference:                                 p50 ${ms(diff.p50)}  p99 ${ms(diff.p99)}  (target p50 ≤ ${TARGET_P50_DIFF_MS} ms)`);
  const pace = paced ? `, each paced at ${options.connectionRate} req/s` : '';
  console.log(`concurrent, ${options.concurrency} connections (one key each${pace}) × ${options.duration} s, ${options.rounds} paired rounds:`);
  rounds.forEach((r, i) => {
    const order = i % 2 === 0 ? 'on, off' : 'off, on';
    console.log(
      `  round ${i + 1} (${order}): on ${r.on.rps.toFixed(0)} req/s p50 ${r.on.p50} ms p99 ${r.on.p99} ms non-2xx ${r.on.non2xx}` +
        ` | off ${r.off.rps.toFixed(0)} req/s p50 ${r.off.p50} ms p99 ${r.off.p99} ms non-2xx ${r.off.non2xx}` +
        ` | ${(r.on.rps / r.off.rps).toFixed(2)}×`,
    );
  });
  console.log(`  all rounds: on ${total('on').toFixed(0)} / off ${total('off').toFixed(0)} req/s summed = ${ratio.toFixed(2)}× (${paced ? 'paced: no target' : `target ≥ ${TARGET_RATIO}`})`);
  const perRequest = (side: 'on' | 'off') => cpu[side].perUnit(rounds.reduce((sum, r) => sum + r[side].total, 0));
  const [cpuOn, cpuOff] = [perRequest('on'), perRequest('off')];
  const cpuLine = (side: Record<string, number>) =>
    Object.entries(side)
      .map(([group, us]) => `${group} ${us.toFixed(0)}`)
      .join(', ');
  console.log(`  CPU per request (µs, /proc, all rounds): on: ${cpuLine(cpuOn)}`);
  console.log(`                                          off: ${cpuLine(cpuOff)}`);
  console.log(`                                          on − off: gateway ${(cpuOn.gateway - cpuOff.gateway).toFixed(0)}, total ${(cpuOn.total - cpuOff.total).toFixed(0)}`);
  const loadCounted = loadLedger.received;
  const kinds = [...statements.after].map(([kind, n]) => [kind, n - (statements.before.get(kind) ?? 0)] as const).filter(([, n]) => n > 0);
  const all = kinds.reduce((sum, [, n]) => sum + n, 0);
  console.log(
    `  ledger statements of the metered gateway under load: ${all} for ${loadCounted} counted requests (${((1000 * all) / Math.max(1, loadCounted)).toFixed(1)} per 1,000: ` +
      `${kinds.map(([kind, n]) => `${kind} ${n}`).join(', ')})`,
  );
  console.log(`ledger: used ${usage.used}, reserved ${usage.reserved} after the sequential phase (expected ${counted}, 0): ${ledgerOk ? 'exact' : 'WRONG'}`);
  console.log(
    `ledger under load: used ${loadLedger.used}, reserved ${loadLedger.reserved}; 2xx received ${loadLedger.received} (warm-up included)` +
      ` (used may exceed it by the ≤ ${loadLedger.slack} responses cut off at the runs' ends): ${loadLedger.ok ? 'exact' : 'WRONG'}`,
  );
  console.log(pass ? 'PASS' : 'FAIL');
  return pass ? 0 : 1;
}

async function main(): Promise<number> {
  const options = commandLine('bench:metering', USAGE, parseOptions);
  const databaseUrl = databaseUrlFor(NAME);
  await adminQuery(`DROP DATABASE IF EXISTS "${NAME}" WITH (FORCE)`);
  await adminQuery(`CREATE DATABASE "${NAME}"`);
  const rabbitUrl = createVhost(NAME);
  const redisPrefix = `cars-bench:${process.pid}:`;
  const db = await createDataSource({ url: databaseUrl, poolSize: 2, applicationName: 'bench' }).initialize();
  const apps: ChildProcess[] = [];
  const clients: Http[] = [];
  try {
    await runMigrations(db);
    const { accountId, auth, loadKeys, loadAccounts } = await createAccounts(db, options);
    const { onOrigin, offOrigin } = await startApps(databaseUrl, rabbitUrl, redisPrefix, apps);
    const on = new Http(onOrigin, auth);
    const off = new Http(offOrigin, auth);
    clients.push(on, off);
    await on.waitUntilAnswering(PATH, 30000);
    await off.waitUntilAnswering(PATH, 30000);

    const samples = await sequential(on, off, options);
    const ledger = await checkLedger(db, accountId, options);
    const [query, onGateway, offGateway] = apps.map((app) => app.pid!);
    const groups = (gateway: number) => async () => ({
      gateway: [gateway],
      query: [query],
      postgres: pidsNamed('postgres'),
      rabbitmq: pidsNamed('beam.smp'),
      redis: pidsNamed('redis-server'),
      autocannon: [process.pid],
    });
    const cpu = { on: new CpuTally(groups(onGateway)), off: new CpuTally(groups(offGateway)) };
    const before = await ledgerStatements(on.origin);
    const load = await pairedLoad(on.origin, off.origin, loadKeys, options, cpu);
    const loadLedger = await checkLoadLedger(db, loadAccounts, load, options);
    const statements = { before, after: await ledgerStatements(on.origin) };
    return report(options, samples, load.rounds, ledger, loadLedger, cpu, statements);
  } finally {
    for (const client of clients) await client.close();
    for (const app of apps) await stopApp(app);
    await db.destroy();
    if (!options.keep) {
      await adminQuery(`DROP DATABASE IF EXISTS "${NAME}" WITH (FORCE)`);
      deleteVhost(NAME);
    }
    await deleteRedisPrefix(redisPrefix);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
