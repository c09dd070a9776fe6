import 'reflect-metadata';
import { ChildProcess, spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { Pool } from 'undici';
import { createAccount } from '@cars/accounts';
import { createDataSource, pgPoolOf } from '@cars/persistence';
import { freePort } from '@cars/runtime';
import { createVhost, deleteVhost } from '@cars/testing';
import { booleanFlag, commandLine, integerFlag, numberFlag, parseFlags, stringFlag } from '../common/args';
import { percentile } from '../common/latency';
import { prepareDataset } from '../query/dataset';

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

interface Answer {
  status: number;
  body: string;
}

class Client {
  private readonly pool: Pool;

  constructor(
    origin: string,
    private readonly apiKey: string,
    connections: number,
  ) {
    this.pool = new Pool(origin, { connections, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 60_000, bodyTimeout: 60_000 });
  }

  async get(path: string): Promise<Answer> {
    const res = await this.pool.request({ method: 'GET', path, headers: { authorization: `Bearer ${this.apiKey}` } });
    return { status: res.statusCode, body: await res.body.text() };
  }

  async mcp(message: unknown): Promise<Answer> {
    const res = await this.pool.request({
      method: 'POST',
      path: '/mcp',
      headers: {
        authorization: `Bearer ${this.apiKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(message),
    });
    return { status: res.statusCode, body: await res.body.text() };
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** Counts by label (status codes, tool outcomes). */
class Tally {
  readonly counts = new Map<string, number>();

  add(label: string, n = 1): void {
    this.counts.set(label, (this.counts.get(label) ?? 0) + n);
  }

  toString(): string {
    return [...this.counts.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([label, n]) => `${label}×${n}`)
      .join(' ');
  }
}

interface VictimSample {
  path: string;
  ms: number;
  status: number | string;
  /** The start of the body of an answer that is not a 200. */
  body?: string;
}

interface PhaseResult {
  name: string;
  victim: { requests: number; ok: number; p50: number; p90: number; p99: number; max: number; failures: string[] };
  attacker: string;
}

/** Open loop: `send(i)` is due at start + i / rate whatever earlier ones are doing; returns when all are answered. */
async function openLoop(rate: number, seconds: number, send: (i: number, due: number) => Promise<void>): Promise<void> {
  const total = Math.round(rate * seconds);
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i += 1) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    pending.push(send(i, due));
  }
  await Promise.all(pending);
}

/** Values from the data set, so every request of the mix finds something. */
interface Mix {
  victim: string[];
  shortKeywords: string[];
  broadKeywords: string[];
  notes: string[];
}

async function buildMix(databaseUrl: string): Promise<Mix> {
  const db = await createDataSource({ url: databaseUrl, poolSize: 2, applicationName: 'bench-noisy' }).initialize();
  try {
    const makes = ((await db.query(
      `SELECT ocd_make_name AS name FROM auctions WHERE NOT is_live AND ocd_make_name IS NOT NULL
       GROUP BY 1 ORDER BY count(*) DESC LIMIT 6`,
    )) as { name: string }[]).map((r) => r.name);
    const words = ((await db.query(
      `SELECT w FROM (SELECT regexp_split_to_table(title, ' ') AS w FROM auctions WHERE NOT is_live LIMIT 5000) t
       WHERE w ~ '^[A-Za-z]{5,}$' GROUP BY w ORDER BY count(*) DESC LIMIT 4`,
    )) as { w: string }[]).map((r) => r.w);
    const bidAuctions = ((await db.query(
      `SELECT auction_id::text AS id FROM bids GROUP BY auction_id ORDER BY auction_id LIMIT 6`,
    )) as { id: string }[]).map((r) => r.id);
    const victim: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      const make = encodeURIComponent(makes[i % makes.length]);
      const word = encodeURIComponent(words[i % words.length]);
      victim.push(
        `/auctions?make=${make}&limit=20`,
        `/auctions?make=${make}&year_min=1970&sort=price&limit=20`,
        `/auctions?keyword=${word}&limit=20`,
        `/auctions/live?limit=20`,
        `/auctions/${bidAuctions[i % bidAuctions.length]}/bids?limit=50`,
        `/stats?make=${make}`,
        `/auctions?page=2&limit=50`,
      );
    }
    const notes = [`makes ${makes.join(', ')}; victim keywords ${words.join(', ')}`];
    // Three-letter ones found in nearly every description, and two-word ones built of them (whose
    // token lookups cannot decide alone: every candidate description is tested).
    const broadKeywords = ['the', 'ing', 'the car', 'and the'];
    for (const keyword of broadKeywords) {
      const [{ n }] = (await db.query(
        `SELECT count(*)::int AS n FROM auctions WHERE NOT is_live AND (title ILIKE $1 OR description ILIKE $1)`,
        [`%${keyword}%`],
      )) as { n: number }[];
      notes.push(`broad keyword "${keyword}" matches ${n} auctions`);
    }
    return { victim, shortKeywords: ['qa', 'zx', 'mq', 'jv'], broadKeywords, notes };
  } finally {
    await db.destroy();
  }
}

function summarizeVictim(samples: VictimSample[]): PhaseResult['victim'] {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  const failed = samples.filter((s) => s.status !== 200);
  const byCause = new Tally();
  for (const f of failed) byCause.add(`${f.status}`);
  return {
    requests: samples.length,
    ok: samples.length - failed.length,
    p50: percentile(ms, 50),
    p90: percentile(ms, 90),
    p99: percentile(ms, 99),
    max: ms[ms.length - 1] ?? NaN,
    failures: failed.length ? [`${byCause}`, ...failed.slice(0, 3).map((f) => `${f.path} → ${f.status} ${f.body ?? ''}`)] : [],
  };
}

/** Fresh filters for the i-th attack request: a different filter set each time, so no count is cached. */
function attackFilters(i: number): string {
  return `year_min=${1137 + (i % 800)}&price_min=${(i * 7919) % 100_000}`;
}

async function main(): Promise<number> {
  const options = commandLine('bench:noisy', USAGE, parseOptions);
  log(`${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}; apps from ${options.apps}`);
  const dataset = await prepareDataset({ ...options, database: DATABASE });
  const mix = await buildMix(dataset.databaseUrl);
  for (const note of mix.notes) log(note);

  const db = await createDataSource({ url: dataset.databaseUrl, poolSize: 2, applicationName: 'bench-noisy' }).initialize();
  const suffix = `${process.pid}-${Date.now()}`;
  const victimAccount = await createAccount(pgPoolOf(db), { email: `victim-${suffix}@bench.invalid`, plan: '100k', emailVerified: true, planExpiresAt: null });
  const attackerAccount = await createAccount(pgPoolOf(db), { email: `attacker-${suffix}@bench.invalid`, plan: '100k', emailVerified: true, planExpiresAt: null });
  await db.destroy();

  const vhost = DATABASE;
  const rabbitUrl = createVhost(vhost);
  const port = await freePort();
  const common = { DATABASE_URL: dataset.databaseUrl, RABBITMQ_URL: rabbitUrl, HEALTH_PORT: '0' };
  const apps: ChildProcess[] = [];
  try {
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
    const origin = `http://127.0.0.1:${port}`;
    const victim = new Client(origin, victimAccount.key.apiKey, 32);
    const attacker = new Client(origin, attackerAccount.key.apiKey, 256);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const res = await victim.get('/auctions?limit=1').catch(() => ({ status: 0, body: '' }));
      if (res.status === 200) break;
      if (Date.now() > deadline) throw new Error(`the gateway did not answer 200 within 60 s (last ${res.status} ${res.body.slice(0, 200)})`);
      await sleep(250);
    }
    // Warm-up: every victim request once (its first count of a filter set is the uncached one),
    // at 8/s (within the burst limit), then a pause for the bucket to refill.
    for (const path of mix.victim) {
      const [res] = await Promise.all([victim.get(path), sleep(125)]);
      if (res.status !== 200) log(`warm-up ${path} → ${res.status} ${res.body.slice(0, 200)}`);
    }
    await sleep(2000);

    const browse = async (): Promise<VictimSample[]> => {
      const samples: VictimSample[] = [];
      await openLoop(options.victimRate, options.seconds, async (i, due) => {
        const path = mix.victim[i % mix.victim.length];
        const answer = await victim.get(path).then(
          (res) => ({ status: res.status, body: res.status === 200 ? undefined : res.body.slice(0, 160) }),
          (error: unknown) => ({ status: String(error), body: undefined }),
        );
        samples.push({ path, ms: performance.now() - due, ...answer });
      });
      return samples;
    };

    const keywordAttack = async (tally: Tally): Promise<void> => {
      await openLoop(options.attackRate, options.seconds, async (i) => {
        const keyword = i % 2 === 0 ? mix.shortKeywords[(i / 2) % mix.shortKeywords.length] : mix.broadKeywords[((i - 1) / 2) % mix.broadKeywords.length];
        const res = await attacker.get(`/auctions?keyword=${encodeURIComponent(keyword)}&${attackFilters(i)}&limit=1`).catch(() => ({ status: 0, body: '' }));
        tally.add(`${keyword.length === 2 ? 'short' : keyword.includes(' ') ? 'broad-2w' : 'broad'} ${res.status}`);
      });
    };

    const searchCall = (id: number, keyword: string) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'search_auctions', arguments: { keyword, year_min: 1137 + (id % 800), price_min: (id * 7919) % 100_000, limit: 1 } },
    });
    /** Tool results in an MCP answer by outcome (ok, the REST status of a tool error, or the JSON-RPC error code). */
    const outcomes = (tally: Tally, prefix: string, res: Answer) => {
      tally.add(`${prefix} http ${res.status}`);
      let parsed: unknown;
      try {
        parsed = JSON.parse(res.body);
      } catch {
        return;
      }
      for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
        const m = message as { result?: { isError?: boolean; structuredContent?: { error?: string } }; error?: { code?: number } };
        if (m.error) tally.add(`${prefix} rpc-error ${m.error.code}`);
        else if (m.result?.isError) tally.add(`${prefix} tool-error ${m.result.structuredContent?.error ?? '?'}`);
        else if (m.result) tally.add(`${prefix} ok`);
      }
    };
    const mcpAttack = async (tally: Tally): Promise<void> => {
      let next = 1;
      const batches = openLoop(1, options.seconds, async () => {
        const batch = Array.from({ length: options.batch }, () => {
          next += 1;
          return searchCall(next, mix.shortKeywords[next % mix.shortKeywords.length]);
        });
        const res = await attacker.mcp(batch).catch(() => ({ status: 0, body: '' }));
        outcomes(tally, 'batch', res);
      });
      const singles = openLoop(Math.max(0.1, options.attackRate - 1), options.seconds, async (i) => {
        next += 1;
        const res = await attacker.mcp(searchCall(next, mix.broadKeywords[i % mix.broadKeywords.length])).catch(() => ({ status: 0, body: '' }));
        outcomes(tally, 'single', res);
      });
      await Promise.all([batches, singles]);
    };

    const phases: { name: string; attack?: (tally: Tally) => Promise<void> }[] = [
      { name: 'phase 0: victim alone' },
      { name: 'phase 1: keyword attack' },
      { name: 'phase 2: MCP attack' },
    ];
    phases[1].attack = keywordAttack;
    phases[2].attack = mcpAttack;
    const results: PhaseResult[] = [];
    for (const phase of phases) {
      log(`${phase.name} (${options.seconds} s)…`);
      const tally = new Tally();
      const [samples] = await Promise.all([browse(), phase.attack?.(tally)]);
      results.push({ name: phase.name, victim: summarizeVictim(samples), attacker: phase.attack ? `${tally}` : '—' });
      // Let the attack's last requests drain before the next phase.
      await sleep(2000);
    }
    await victim.close();
    await attacker.close();

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
    return failed ? 1 : 0;
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
