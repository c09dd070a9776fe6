import 'reflect-metadata';
import { ChildProcess, spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { createAccount } from '@cars/accounts';
import { createDataSource, pgPoolOf } from '@cars/persistence';
import { freePort } from '@cars/runtime';
import { createVhost, deleteVhost } from '@cars/testing';
import { booleanFlag, commandLine, integerFlag, numberFlag, parseFlags, stringFlag } from '../common/args';
import { DatasetInfo, prepareDataset } from '../query/dataset';
import { buildMix, Client, Mix, PhaseResult, runPhases } from './traffic';

/**
 * Noisy neighbour: can one paying customer take the API away from another?
 *
 *   npm run build && node dist/tools/bench/noisy/main.js [--auctions 120000] [--seconds 20]
 *     [--victim-rate 6] [--attack-rate 9.5] [--batch 100] [--apps <dist dir>] [--reload]
 *
 * The distributed topology (gateway, query and stats apps as their own processes over RabbitMQ,
 * API access on: keys, burst limits, the monthly ledger) over a data set of `auctions` auctions
 * (database `cars_bench_noisy`, reused at the same size and seed). Two accounts on the 100K plan:
 * a victim browsing at `victim-rate` requests/s (filtered searches, a keyword of 3+ letters, live
 * auctions, bids, /stats), and an attacker staying within its burst limit (10/s, bursts of 20):
 *
 *   phase 0: the victim alone;
 *   phase 1: the attacker's keyword attack at `attack-rate`/s, fresh filters on every request
 *            (so no count cache helps): two-letter keywords, and broad ones (three letters found in
 *            nearly every description, and two-word keywords made of them);
 *   phase 2: the attacker's MCP attack: one JSON-RPC batch of `batch` `search_auctions` calls
 *            per second, and single `search_auctions` calls with broad keywords filling the rest
 *            of its burst rate.
 *
 * Per phase: the victim's requests, % of 200s, p50/p90/p99/max (ms from the scheduled send time:
 * open loop), and the attacker's answers by status. Exit code 1 when the victim has fewer than
 * 99 % 200s or a p99 above 250 ms in any phase.
 *
 * `--apps` runs the apps of another build (e.g. a worktree of an older commit) against the same
 * data set: figures before and after a change. Servers: TEST_POSTGRES_ADMIN_URL,
 * TEST_RABBITMQ_BASE_URL as the test suite uses them; BENCH_REDIS_URL (default redis://127.0.0.1:6379).
 */

const DATABASE = 'cars_bench_noisy';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const TARGET_OK = 0.99;
const TARGET_P99_MS = 250;

interface Options {
  auctions: number;
  live: number;
  seed: string;
  reload: boolean;
  seconds: number;
  victimRate: number;
  attackRate: number;
  batch: number;
  apps: string;
  keep: boolean;
}

const USAGE = `Usage: node dist/tools/bench/noisy/main.js [options]

  --auctions N       auctions in the data set (default 120000)
  --live N           live auctions among them (default 1500)
  --seed S           data set seed (default "1")
  --reload           regenerate the data set even when one of this size and seed is loaded
  --seconds S        length of each phase (default 20)
  --victim-rate R    the victim's requests/s (default 6)
  --attack-rate R    the attacker's requests/s (default 9.5, within its burst limit of 10/s)
  --batch N          calls per MCP batch of phase 2 (default 100)
  --apps DIR         the dist/ directory whose apps run (default: this build's)
  --keep             keep the vhost afterwards
  -h, --help         this text`;

function parseOptions(argv: readonly string[]): Options | 'help' {
  const flags = parseFlags(argv, {
    auctions: { type: 'string' },
    live: { type: 'string' },
    seed: { type: 'string' },
    reload: { type: 'boolean' },
    seconds: { type: 'string' },
    'victim-rate': { type: 'string' },
    'attack-rate': { type: 'string' },
    batch: { type: 'string' },
    apps: { type: 'string' },
    keep: { type: 'boolean' },
  });
  if (flags === 'help') return 'help';
  return {
    auctions: integerFlag(flags, 'auctions', 120_000, 1000),
    live: integerFlag(flags, 'live', 1500),
    seed: stringFlag(flags, 'seed', '1'),
    reload: booleanFlag(flags, 'reload'),
    seconds: numberFlag(flags, 'seconds', 20, 'positive'),
    victimRate: numberFlag(flags, 'victim-rate', 6, 'positive'),
    attackRate: numberFlag(flags, 'attack-rate', 9.5, 'positive'),
    batch: integerFlag(flags, 'batch', 100, 1),
    apps: resolve(stringFlag(flags, 'apps', join(__dirname, '../../..'))),
    keep: booleanFlag(flags, 'keep'),
  };
}

const log = (message: string) => process.stderr.write(`bench:noisy ${message}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function startApp(dist: string, name: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [join(dist, 'apps', name, 'src/main.js')], {
    env: { ...process.env, LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return child;
}

async function stopApp(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, sleep(5000)]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** Two accounts on the 100K plan, a victim and an attacker, under names of this run. */
async function createBenchAccounts(databaseUrl: string, suffix: string): Promise<{ victimKey: string; attackerKey: string }> {
  const db = await createDataSource({ url: databaseUrl, poolSize: 2, applicationName: 'bench-noisy' }).initialize();
  const victimAccount = await createAccount(pgPoolOf(db), { email: `victim-${suffix}@bench.invalid`, plan: '100k', emailVerified: true, planExpiresAt: null });
  const attackerAccount = await createAccount(pgPoolOf(db), { email: `attacker-${suffix}@bench.invalid`, plan: '100k', emailVerified: true, planExpiresAt: null });
  await db.destroy();
  return { victimKey: victimAccount.key.apiKey, attackerKey: attackerAccount.key.apiKey };
}

/** The query, stats and gateway apps as processes (pushed to `apps` as they start); the gateway's origin. */
async function startTopology(options: Options, databaseUrl: string, rabbitUrl: string, suffix: string, apps: ChildProcess[]): Promise<string> {
  const port = await freePort();
  const common = { DATABASE_URL: databaseUrl, RABBITMQ_URL: rabbitUrl, HEALTH_PORT: '0' };
  apps.push(startApp(options.apps, 'query', common), startApp(options.apps, 'stats', common));
  apps.push(
    startApp(options.apps, 'gateway', {
      ...common,
      PORT: String(port),
      HOST: '127.0.0.1',
      REDIS_URL,
      REDIS_KEY_PREFIX: `bench-noisy-${suffix}:`,
    }),
  );
  return `http://127.0.0.1:${port}`;
}

async function waitForGateway(victim: Client): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await victim.get('/auctions?limit=1').catch(() => ({ status: 0, body: '' }));
    if (res.status === 200) return;
    if (Date.now() > deadline) throw new Error(`the gateway did not answer 200 within 60 s (last ${res.status} ${res.body.slice(0, 200)})`);
    await sleep(250);
  }
}

/**
 * Every victim request once (its first count of a filter set is the uncached one), at 8/s (within
 * the burst limit), then a pause for the bucket to refill.
 */
async function warmUp(victim: Client, mix: Mix): Promise<void> {
  for (const path of mix.victim) {
    const [res] = await Promise.all([victim.get(path), sleep(125)]);
    if (res.status !== 200) log(`warm-up ${path} → ${res.status} ${res.body.slice(0, 200)}`);
  }
  await sleep(2000);
}

/** The table and the JSON line on standard output; true when the victim missed a target in some phase. */
function report(dataset: DatasetInfo, options: Options, mix: Mix, results: PhaseResult[]): boolean {
  const fmt = (n: number) => (Number.isNaN(n) ? '—' : n >= 100 ? n.toFixed(0) : n.toFixed(1));
  const out = [
    `Noisy neighbour: ${dataset.auctions} auctions (${dataset.live} live); victim ${options.victimRate} req/s, attacker ` +
      `${options.attackRate} req/s, ${options.seconds} s per phase; ${cpus().length} CPUs, load average at the end ` +
      `${loadavg().map((l) => l.toFixed(2)).join(' ')} (machine shared with other work); apps from ${options.apps}`,
    ...mix.notes.map((n) => `  · ${n}`),
    '',
    `${'phase'.padEnd(26)} ${'victim'.padStart(6)} ${'% 200'.padStart(6)} ${'p50'.padStart(6)} ${'p90'.padStart(6)} ${'p99'.padStart(6)} ${'max'.padStart(6)}  attacker answers`,
  ];
  let failed = false;
  for (const r of results) {
    const v = r.victim;
    const share = v.requests ? v.ok / v.requests : 0;
    const missed = share < TARGET_OK || !(v.p99 <= TARGET_P99_MS);
    failed ||= missed;
    out.push(
      `${r.name.padEnd(26)} ${String(v.requests).padStart(6)} ${(share * 100).toFixed(1).padStart(6)} ${fmt(v.p50).padStart(6)} ${fmt(v.p90).padStart(6)} ` +
        `${fmt(v.p99).padStart(6)} ${fmt(v.max).padStart(6)}  ${r.attacker}${missed ? '  MISSED' : ''}`,
    );
    for (const f of v.failures) out.push(`${''.padEnd(28)}victim: ${f}`);
  }
  out.push('', `victim ≥ ${TARGET_OK * 100} % 200s and p99 ≤ ${TARGET_P99_MS} ms in every phase: ${failed ? 'MISSED' : 'ok'}`);
  console.log(out.join('\n'));
  console.log(JSON.stringify({ dataset, options, results, load: loadavg() }));
  return failed;
}

async function main(): Promise<number> {
  const options = commandLine('bench:noisy', USAGE, parseOptions);
  log(`${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; apps from ${options.apps}`);
  const dataset = await prepareDataset({ ...options, database: DATABASE });
  const mix = await buildMix(dataset.databaseUrl);
  for (const note of mix.notes) log(note);
  const suffix = `${process.pid}-${Date.now()}`;
  const { victimKey, attackerKey } = await createBenchAccounts(dataset.databaseUrl, suffix);

  const vhost = DATABASE;
  const rabbitUrl = createVhost(vhost);
  const apps: ChildProcess[] = [];
  try {
    const origin = await startTopology(options, dataset.databaseUrl, rabbitUrl, suffix, apps);
    const victim = new Client(origin, victimKey, 32);
    const attacker = new Client(origin, attackerKey, 256);
    await waitForGateway(victim);
    await warmUp(victim, mix);
    const results = await runPhases({ victim, attacker, mix, options }, log);
    await victim.close();
    await attacker.close();
    return report(dataset, options, mix, results) ? 1 : 0;
  } finally {
    await Promise.all(apps.map(stopApp));
    if (!options.keep) deleteVhost(vhost);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
