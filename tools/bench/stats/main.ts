import 'reflect-metadata';
import { ChildProcess, spawn } from 'node:child_process';
import { isDeepStrictEqual } from 'node:util';
import { freePort } from '@cars/runtime';
import { summarize } from '../common/latency';
import { booleanFlag, commandLine, numberFlag, parseFlags } from '../common/args';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Client } from 'pg';
import { Pool } from 'undici';
import { createAccount } from '@cars/accounts';
import { createDataSource, pgPoolOf, runMigrations } from '@cars/persistence';
import { adminQuery, createVhost, databaseUrlFor, deleteVhost } from '@cars/testing';
import { generateDataset } from './dataset';
import { BenchScope, rawStats, rawStatsQuery, StatsAnswer } from './reference';

/**
 * GET /stats benchmark (docs/api/stats.md, "Benchmark"):
 *
 *   npm run build && node dist/tools/bench/stats/main.js [--auctions 1000000] [--requests 1000]
 *     [--seed 42] [--reuse] [--no-auth] [--concurrency 8] [--duration 10]
 *
 * 1. Database `cars_bench_stats` (recreated unless --reuse finds it loaded), migrations, N auctions
 *    generated with generate_series (dataset.ts), VACUUM ANALYZE.
 * 2. The stats and gateway apps as separate processes over the RabbitMQ vhost `cars_bench_stats`;
 *    a paid (100K) account's API key, so authentication, the plan check and metering are on the
 *    measured path (--no-auth: METERING_ENABLED=false).
 * 3. For the largest make, its top model, that model with a year range (targets), and the make
 *    with a year range and the smallest make (for reference): the HTTP answer must equal the raw
 *    SQL aggregate (reference.ts); then p50/p99 of sequential HTTP requests beside p50/p99 of that
 *    raw SQL, and a concurrent autocannon run on the largest make.
 * 4. Ingest writes (insert, price update, status change, delete) each committed, then the next
 *    answer must equal the raw SQL again and show the change: never stale.
 * 5. The cost the rollup triggers add to single-row ingest writes (each committed).
 *
 * Targets: every HTTP p50 ≤ 15 ms and p99 ≤ 50 ms. Exit code 1 when a check or target fails.
 * Servers: those of the test suite — TEST_POSTGRES_ADMIN_URL (default
 * postgres://postgres@127.0.0.1:5432/postgres) and TEST_RABBITMQ_BASE_URL (amqp://guest:guest@127.0.0.1:5672).
 */

const DATABASE = 'cars_bench_stats';
const VHOST = 'cars_bench_stats';
const TARGET_P50_MS = 15;
const TARGET_P99_MS = 50;

interface Options {
  auctions: number;
  requests: number;
  seed: number;
  reuse: boolean;
  auth: boolean;
  concurrency: number;
  duration: number;
}

const USAGE = `Usage: node dist/tools/bench/stats/main.js [options]

  --auctions N       auctions of the data set (default 1000000)
  --requests N       sequential requests per scenario (default 1000)
  --seed N           data set seed (default 42)
  --reuse            keep the database when it is loaded already
  --no-auth          METERING_ENABLED=false: no authentication, plan check or metering
  --concurrency N    connections of the concurrent run (default 8; 0 skips it)
  --duration S       seconds of the concurrent run (default 10; 0 skips it)
  -h, --help         this text`;

function parseOptions(argv: readonly string[]): Options | 'help' {
  const flags = parseFlags(argv, {
    auctions: { type: 'string' },
    requests: { type: 'string' },
    seed: { type: 'string' },
    reuse: { type: 'boolean' },
    'no-auth': { type: 'boolean' },
    concurrency: { type: 'string' },
    duration: { type: 'string' },
  });
  if (flags === 'help') return 'help';
  return {
    auctions: numberFlag(flags, 'auctions', 1_000_000),
    requests: numberFlag(flags, 'requests', 1000),
    seed: numberFlag(flags, 'seed', 42),
    reuse: booleanFlag(flags, 'reuse'),
    auth: !booleanFlag(flags, 'no-auth'),
    concurrency: numberFlag(flags, 'concurrency', 8),
    duration: numberFlag(flags, 'duration', 10),
  };
}

const log = (message: string) => console.error(`[bench:stats] ${message}`);


const ms = (value: number) => `${value.toFixed(2)} ms`;


function trendMonthBounds(now = new Date()): { first: string; last: string } {
  const first = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 11, 1));
  const last = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  return { first: first.toISOString().slice(0, 10), last: last.toISOString().slice(0, 10) };
}

function queryString(scope: BenchScope): string {
  return `/stats?${new URLSearchParams(Object.fromEntries(Object.entries(scope).map(([k, v]) => [k, String(v)]))).toString()}`;
}

async function prepareDatabase(options: Options, url: string): Promise<void> {
  if (options.reuse) {
    const probe = new Client({ connectionString: url });
    const loaded = await probe
      .connect()
      .then(() => probe.query(`SELECT count(*)::int AS n FROM auctions`))
      .then((r) => (r.rows[0] as { n: number }).n)
      .catch(() => -1)
      .finally(() => probe.end().catch(() => undefined));
    if (loaded >= options.auctions) {
      log(`reusing ${DATABASE} with ${loaded} auctions`);
      return;
    }
  }
  await adminQuery(`DROP DATABASE IF EXISTS "${DATABASE}" WITH (FORCE)`);
  await adminQuery(`CREATE DATABASE "${DATABASE}"`);
  const dataSource = await createDataSource({ url, poolSize: 2, applicationName: 'bench-stats' }).initialize();
  await runMigrations(dataSource);
  await dataSource.destroy();

  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    let started = Date.now();
    await generateDataset(client, { auctions: options.auctions, seed: options.seed });
    log(`generated ${options.auctions} auctions in ${((Date.now() - started) / 1000).toFixed(1)} s (rollup triggers included)`);
    started = Date.now();
    await client.query(`VACUUM ANALYZE auctions`);
    await client.query(`VACUUM ANALYZE stats_sales_totals`);
    await client.query(`VACUUM ANALYZE stats_sales_monthly`);
    log(`VACUUM ANALYZE in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await client.end();
  }
}

function startApp(name: string, env: Record<string, string>): ChildProcess {
  const main = join(__dirname, '..', '..', '..', 'apps', name, 'src', 'main.js');
  const child = spawn(process.execPath, [main], { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  child.once('exit', (code, signal) => {
    if (!stopping) log(`${name} exited early (${signal ?? code})`);
  });
  return child;
}
let stopping = false;

async function stopApp(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(force);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

class Http {
  private readonly pool: Pool;

  constructor(
    private readonly origin: string,
    private readonly headers: Record<string, string>,
  ) {
    this.pool = new Pool(origin, { connections: 1, pipelining: 1 });
  }

  async get(path: string): Promise<{ status: number; body: unknown }> {
    const res = await this.pool.request({ path, method: 'GET', headers: this.headers });
    const text = await res.body.text();
    return { status: res.statusCode, body: text ? (JSON.parse(text) as unknown) : undefined };
  }

  async waitUntilAnswering(path: string, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      try {
        const res = await this.get(path);
        if (res.status === 200) return;
        last = `${res.status} ${JSON.stringify(res.body)}`;
      } catch (error) {
        last = String(error);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`${this.origin}${path} not answering 200 after ${timeoutMs} ms: ${last}`);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

interface Scenario {
  name: string;
  scope: BenchScope;
  target: boolean;
}

async function pickScenarios(client: Client): Promise<Scenario[]> {
  const make = (await client.query(`SELECT ocd_make_name AS make, count(*)::int AS n FROM auctions
    WHERE ocd_make_name IS NOT NULL GROUP BY 1 ORDER BY 2 DESC LIMIT 1`)).rows[0] as { make: string; n: number };
  const model = (await client.query(`SELECT ocd_model_name AS model, count(*)::int AS n FROM auctions
    WHERE ocd_make_name = $1 AND ocd_model_name IS NOT NULL GROUP BY 1 ORDER BY 2 DESC LIMIT 1`, [make.make])).rows[0] as {
    model: string;
    n: number;
  };
  const years = (await client.query(
    `SELECT percentile_disc(0.25) WITHIN GROUP (ORDER BY year) AS lo, percentile_disc(0.75) WITHIN GROUP (ORDER BY year) AS hi
     FROM auctions WHERE ocd_make_name = $1 AND ocd_model_name = $2 AND year IS NOT NULL`,
    [make.make, model.model],
  )).rows[0] as { lo: number; hi: number };
  const makeYears = (await client.query(
    `SELECT percentile_disc(0.2) WITHIN GROUP (ORDER BY year) AS lo, percentile_disc(0.6) WITHIN GROUP (ORDER BY year) AS hi
     FROM auctions WHERE ocd_make_name = $1 AND year IS NOT NULL`,
    [make.make],
  )).rows[0] as { lo: number; hi: number };
  const smallest = (await client.query(`SELECT ocd_make_name AS make FROM auctions
    WHERE ocd_make_name IS NOT NULL GROUP BY 1 ORDER BY count(*) ASC LIMIT 1`)).rows[0] as { make: string };
  log(`largest make ${make.make}: ${make.n} auctions; top model ${model.model}: ${model.n}`);
  return [
    { name: `make (${make.make})`, scope: { make: make.make }, target: true },
    { name: `make+model (${model.model})`, scope: { make: make.make, model: model.model }, target: true },
    {
      name: `make+model+years (${years.lo}-${years.hi})`,
      scope: { make: make.make, model: model.model, year_min: years.lo, year_max: years.hi },
      target: true,
    },
    {
      name: `make+years (${makeYears.lo}-${makeYears.hi})`,
      scope: { make: make.make, year_min: makeYears.lo, year_max: makeYears.hi },
      target: false,
    },
    // The floor: the same path with almost no rows behind it.
    { name: `smallest make (${smallest.make})`, scope: { make: smallest.make }, target: false },
  ];
}

async function timeHttp(http: Http, path: string, warmup: number, count: number): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await http.get(path);
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const res = await http.get(path);
    samples.push(performance.now() - started);
    if (res.status !== 200) throw new Error(`GET ${path} → ${res.status} ${JSON.stringify(res.body)}`);
  }
  return samples;
}

async function timeSql(client: Client, query: { text: string; values: unknown[] }, warmup: number, count: number): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await client.query(query);
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await client.query(query);
    samples.push(performance.now() - started);
  }
  return samples;
}

async function concurrentRun(
  origin: string,
  path: string,
  headers: Record<string, string>,
  connections: number,
  duration: number,
): Promise<{ p50: number; p99: number; rps: number; non2xx: number; errors: number }> {
  const result = await autocannon({ url: `${origin}${path}`, headers, connections, duration });
  return {
    p50: result.latency.p50,
    p99: result.latency.p99,
    rps: result.requests.average,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** Ingest-like writes, each committed; the very next answer must equal the raw SQL and show the change. */
async function freshnessChecks(client: Client, http: Http, scope: BenchScope): Promise<string[]> {
  const failures: string[] = [];
  const today = new Date().toISOString().slice(0, 10);
  const year = scope.year_min ?? 1970;
  const check = async (label: string, expectChange: (before: StatsAnswer, after: StatsAnswer) => boolean, write: () => Promise<void>) => {
    const bounds = trendMonthBounds();
    const before = (await http.get(queryString(scope))).body as StatsAnswer;
    await write();
    const after = (await http.get(queryString(scope))).body as StatsAnswer;
    const reference = await rawStats(client, scope, bounds.first, bounds.last);
    const equal = isDeepStrictEqual(after, reference);
    const changed = expectChange(before, after);
    log(`fresh after ${label}: ${equal ? 'equals raw SQL' : 'DIFFERS from raw SQL'}, ${changed ? 'change visible' : 'CHANGE NOT VISIBLE'}`);
    if (!equal) failures.push(`${label}: answer differs from raw SQL\n${JSON.stringify(after)}\n${JSON.stringify(reference)}`);
    if (!changed) failures.push(`${label}: change not visible`);
  };

  await check(
    'insert of 3 sales (one at $12,345,678)',
    (b, a) => a.total_sales === b.total_sales + 3 && a.highest_price === 12345678 && a.price_trend[11].volume === b.price_trend[11].volume + 3,
    async () => {
      await client.query(
        `INSERT INTO auctions (source, source_auction_id, source_status, auction_status, is_live, price, currency, price_usd,
                               auction_end_date, year, ocd_make_name, ocd_model_name)
         SELECT 'bringatrailer', 'bench-fresh-' || i || '-' || $5::text, 'sold', 'sold', false, p, 'USD', p, $1::date, $2, $3, $4
         FROM unnest(ARRAY[12345678, 50000, 75000]) WITH ORDINALITY AS t (p, i)`,
        [today, year, scope.make, scope.model ?? null, Date.now()],
      );
    },
  );
  const cheapest = (await client.query(
    `SELECT id, price, currency, price_usd FROM auctions
     WHERE ocd_make_name = $1 AND ocd_model_name IS NOT DISTINCT FROM $2 AND year = $3
       AND auction_status = 'sold' AND NOT is_live AND price_usd IS NOT NULL AND source_auction_id NOT LIKE 'bench-fresh-%'
     ORDER BY price_usd, id LIMIT 1`,
    [scope.make, scope.model ?? null, year],
  )).rows[0] as { id: string; price: string; currency: string; price_usd: string };
  await check(
    'price update of a sale to $1',
    (_b, a) => a.lowest_price === 1,
    async () => {
      await client.query(`UPDATE auctions SET price_usd = 1, price = 1, currency = 'USD' WHERE id = $1`, [cheapest.id]);
    },
  );
  await check(
    'status change sold → withdrawn (the $12,345,678 sale)',
    (b, a) => a.total_sales === b.total_sales - 1 && a.highest_price < 12345678,
    async () => {
      await client.query(`UPDATE auctions SET auction_status = 'withdrawn', source_status = 'withdrawn'
                          WHERE source_auction_id LIKE 'bench-fresh-%' AND price_usd = 12345678 AND auction_status = 'sold'`);
    },
  );
  await check(
    'delete of the inserted sales',
    (b, a) => a.total_sales === b.total_sales - 2,
    async () => {
      await client.query(`DELETE FROM auctions WHERE source_auction_id LIKE 'bench-fresh-%'`);
    },
  );
  await check(
    'price restored',
    (b, a) => b.lowest_price === 1 && a.lowest_price > 1,
    async () => {
      await client.query(`UPDATE auctions SET price_usd = $2, price = $3, currency = $4 WHERE id = $1`, [
        cheapest.id,
        cheapest.price_usd,
        cheapest.price,
        cheapest.currency,
      ]);
    },
  );
  return failures;
}

/**
 * Single-row ingest writes, each committed on its own like the change-detector's, with the rollup
 * triggers and without them (`session_replication_role = replica` in this session only): a price
 * correction of a sale (the rollups change) and a bid update of a live auction (the frequent write
 * of live polling; nothing for the rollups to do). Each write is followed by its inverse, so the
 * data end as they started and the rollups stay exact.
 */
async function writeCost(client: Client, count: number): Promise<Record<string, { withTriggers: number; withoutTriggers: number }>> {
  const series = [
    {
      name: 'sale price update',
      ids: `SELECT id FROM auctions WHERE auction_status = 'sold' AND NOT is_live AND price_usd IS NOT NULL ORDER BY id LIMIT $1`,
      update: `UPDATE auctions SET price_usd = price_usd + $2, price = price + $2 WHERE id = $1`,
    },
    {
      name: 'live auction bid update',
      ids: `SELECT id FROM auctions WHERE is_live ORDER BY id LIMIT $1`,
      update: `UPDATE auctions SET bid_count = coalesce(bid_count, 0) + sign($2::int), price = price + $2, updated_at = now() WHERE id = $1`,
    },
  ];
  const run = async (ids: string[], update: string) => {
    const samples: number[] = [];
    for (const id of ids) {
      for (const delta of [100, -100]) {
        const started = performance.now();
        await client.query(update, [id, delta]);
        samples.push(performance.now() - started);
      }
    }
    return summarize(samples).p50;
  };
  const result: Record<string, { withTriggers: number; withoutTriggers: number }> = {};
  for (const s of series) {
    const ids = (await client.query(s.ids, [count])).rows.map((r: { id: string }) => r.id);
    const withTriggers = await run(ids, s.update);
    await client.query(`SET session_replication_role = replica`);
    try {
      result[s.name] = { withTriggers, withoutTriggers: await run(ids, s.update) };
    } finally {
      await client.query(`RESET session_replication_role`);
    }
  }
  return result;
}

/** The authorization header of a new 100K-plan account when `auth`, else none. */
async function authHeaders(options: Options, databaseUrl: string): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  if (options.auth) {
    const dataSource = await createDataSource({ url: databaseUrl, poolSize: 2, applicationName: 'bench-stats' }).initialize();
    const { key } = await createAccount(pgPoolOf(dataSource), { email: `bench-${Date.now()}@example.test`, plan: '100k', emailVerified: true });
    await dataSource.destroy();
    headers.authorization = `Bearer ${key.apiKey}`;
  }
  return headers;
}

/** The stats service and the gateway as processes; the gateway's origin. */
async function startApps(options: Options, databaseUrl: string, rabbitUrl: string): Promise<{ apps: ChildProcess[]; origin: string }> {
  const port = await freePort();
  const common = { DATABASE_URL: databaseUrl, RABBITMQ_URL: rabbitUrl, DATABASE_POOL_SIZE: '10' };
  const apps = [
    startApp('stats', { ...common, HEALTH_PORT: '0' }),
    startApp('gateway', {
      ...common,
      PORT: String(port),
      HOST: '127.0.0.1',
      HEALTH_PORT: '0',
      METERING_ENABLED: options.auth ? 'true' : 'false',
      BURST_RATE_PER_SECOND: '100000',
      BURST_CAPACITY: '100000',
    }),
  ];
  return { apps, origin: `http://127.0.0.1:${port}` };
}

/** Correctness at scale: the service's answer equals the raw SQL aggregate; what differs. */
async function checkAnswers(client: Client, http: Http, scenarios: Scenario[]): Promise<string[]> {
  const failures: string[] = [];
  const bounds = trendMonthBounds();
  for (const scenario of scenarios) {
    const answer = await http.get(queryString(scenario.scope));
    const reference = await rawStats(client, scenario.scope, bounds.first, bounds.last);
    const equal = isDeepStrictEqual(answer.body, reference);
    log(`${scenario.name}: ${reference.total_sales} sales; answer ${equal ? 'equals' : 'DIFFERS from'} raw SQL`);
    if (!equal) failures.push(`${scenario.name}: ${JSON.stringify(answer.body)} ≠ ${JSON.stringify(reference)}`);
  }
  return failures;
}

interface ScenarioRow {
  scenario: string;
  sales: number;
  http: ReturnType<typeof summarize>;
  sql: ReturnType<typeof summarize>;
  target: boolean;
}

/** Each scenario's latency over HTTP and of its raw SQL aggregate. */
async function timeScenarios(options: Options, client: Client, http: Http, scenarios: Scenario[]): Promise<ScenarioRow[]> {
  const bounds = trendMonthBounds();
  const rows: ScenarioRow[] = [];
  for (const scenario of scenarios) {
    const path = queryString(scenario.scope);
    const httpSamples = await timeHttp(http, path, 50, options.requests);
    const sqlSamples = await timeSql(client, rawStatsQuery(scenario.scope, bounds.first, bounds.last), 5, Math.min(options.requests, 200));
    const reference = await rawStats(client, scenario.scope, bounds.first, bounds.last);
    rows.push({ scenario: scenario.name, sales: reference.total_sales, http: summarize(httpSamples), sql: summarize(sqlSamples), target: scenario.target });
  }
  return rows;
}

/** The figures on standard output (the targets missed added to `failures`); the exit code. */
function report(
  options: Options,
  loadAtStart: number[],
  measured: {
    rows: ScenarioRow[];
    concurrent: Awaited<ReturnType<typeof concurrentRun>> | null;
    freshness: string[];
    writes: Awaited<ReturnType<typeof writeCost>>;
  },
  failures: string[],
): number {
  const { rows, concurrent, freshness, writes } = measured;
  console.log('');
  console.log(
    `machine: ${cpus().length} CPUs; load average at start ${loadAtStart.map((l) => l.toFixed(2)).join(' ')}, ` +
      `now ${loadavg().map((l) => l.toFixed(2)).join(' ')} (other processes share these CPUs)`,
  );
  console.log(`GET /stats at ${options.auctions.toLocaleString('en-US')} auctions (${options.auth ? 'auth + metering on' : 'METERING_ENABLED=false'}), ${options.requests} sequential requests per scenario`);
  console.log('scenario                                   sales    HTTP p50    HTTP p99   raw SQL p50  raw SQL p99');
  for (const row of rows) {
    console.log(
      `${row.scenario.padEnd(40)} ${String(row.sales).padStart(7)} ${ms(row.http.p50).padStart(11)} ${ms(row.http.p99).padStart(11)} ${ms(row.sql.p50).padStart(12)} ${ms(row.sql.p99).padStart(12)}${row.target ? '' : '  (not a target)'}`,
    );
    if (row.target && (row.http.p50 > TARGET_P50_MS || row.http.p99 > TARGET_P99_MS)) {
      failures.push(`${row.scenario}: p50 ${ms(row.http.p50)} / p99 ${ms(row.http.p99)} misses ${TARGET_P50_MS} / ${TARGET_P99_MS} ms`);
    }
  }
  if (concurrent) {
    console.log(
      `concurrent (${options.concurrency} connections, ${options.duration} s, largest make): p50 ${concurrent.p50} ms, p99 ${concurrent.p99} ms, ${concurrent.rps.toFixed(0)} req/s, non-2xx ${concurrent.non2xx}, errors ${concurrent.errors}`,
    );
    if (concurrent.non2xx > 0 || concurrent.errors > 0) failures.push('concurrent run had non-2xx answers or errors');
  }
  console.log(`freshness after committed ingest writes: ${freshness.length === 0 ? 'every answer equal to raw SQL and changed' : 'FAILED'}`);
  for (const [name, cost] of Object.entries(writes)) {
    console.log(`single-row ${name} p50: ${ms(cost.withTriggers)} with the rollup triggers, ${ms(cost.withoutTriggers)} without`);
  }
  console.log(`targets: every HTTP p50 ≤ ${TARGET_P50_MS} ms and p99 ≤ ${TARGET_P99_MS} ms → ${failures.length === 0 ? 'PASS' : 'FAIL'}`);
  console.log(JSON.stringify({ auctions: options.auctions, auth: options.auth, loadAtStart, loadAtEnd: loadavg(), rows, concurrent, writes, failures }));
  for (const failure of failures) console.error(`FAIL: ${failure}`);
  return failures.length === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  const options = commandLine('bench:stats', USAGE, parseOptions);
  const loadAtStart = loadavg();
  const databaseUrl = databaseUrlFor(DATABASE);

  await prepareDatabase(options, databaseUrl);
  const rabbitUrl = createVhost(VHOST);
  const client = new Client({ connectionString: databaseUrl, application_name: 'bench-stats' });
  await client.connect();
  const headers = await authHeaders(options, databaseUrl);
  const { apps, origin } = await startApps(options, databaseUrl, rabbitUrl);
  const http = new Http(origin, headers);
  try {
    const scenarios = await pickScenarios(client);
    await http.waitUntilAnswering(queryString(scenarios[0].scope), 30000);
    const failures = await checkAnswers(client, http, scenarios);
    const rows = await timeScenarios(options, client, http, scenarios);
    const concurrent = options.duration > 0 && options.concurrency > 0
      ? await concurrentRun(origin, queryString(scenarios[0].scope), headers, options.concurrency, options.duration)
      : null;
    const freshness = await freshnessChecks(client, http, scenarios[2].scope);
    failures.push(...freshness);
    const writes = await writeCost(client, 200);
    return report(options, loadAtStart, { rows, concurrent, freshness, writes }, failures);
  } finally {
    stopping = true;
    await http.close();
    for (const app of apps) await stopApp(app);
    await client.end();
    deleteVhost(VHOST);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
