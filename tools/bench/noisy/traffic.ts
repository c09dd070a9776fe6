import { Pool } from 'undici';
import { createDataSource } from '@cars/persistence';
import { percentile } from '../common/latency';

/** The noisy-neighbour bench's traffic: the victim's browsing, the attacker's two attacks, their tallies. */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Answer {
  status: number;
  body: string;
}

export class Client {
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
export class Tally {
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

export interface VictimSample {
  path: string;
  ms: number;
  status: number | string;
  /** The start of the body of an answer that is not a 200. */
  body?: string;
}

export interface PhaseResult {
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
export interface Mix {
  victim: string[];
  shortKeywords: string[];
  broadKeywords: string[];
  notes: string[];
}

export async function buildMix(databaseUrl: string): Promise<Mix> {
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

/** What the phases need: both clients, the request mix, the phase length and the attack's shape. */
export interface Traffic {
  victim: Client;
  attacker: Client;
  mix: Mix;
  options: { seconds: number; victimRate: number; attackRate: number; batch: number };
}

/** The victim's open-loop browsing for one phase: each request's latency from its scheduled send time. */
async function browse({ victim, mix, options }: Traffic): Promise<VictimSample[]> {
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
}

/** Phase 1: short and broad keywords with fresh filters on every request. */
async function keywordAttack({ attacker, mix, options }: Traffic, tally: Tally): Promise<void> {
  await openLoop(options.attackRate, options.seconds, async (i) => {
    const keyword = i % 2 === 0 ? mix.shortKeywords[(i / 2) % mix.shortKeywords.length] : mix.broadKeywords[((i - 1) / 2) % mix.broadKeywords.length];
    const res = await attacker.get(`/auctions?keyword=${encodeURIComponent(keyword)}&${attackFilters(i)}&limit=1`).catch(() => ({ status: 0, body: '' }));
    tally.add(`${keyword.length === 2 ? 'short' : keyword.includes(' ') ? 'broad-2w' : 'broad'} ${res.status}`);
  });
}

const searchCall = (id: number, keyword: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'search_auctions', arguments: { keyword, year_min: 1137 + (id % 800), price_min: (id * 7919) % 100_000, limit: 1 } },
});

/** Tool results in an MCP answer by outcome (ok, the REST status of a tool error, or the JSON-RPC error code). */
function outcomes(tally: Tally, prefix: string, res: Answer): void {
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
}

/** Phase 2: one MCP batch per second, single broad searches filling the rest of the burst rate. */
async function mcpAttack({ attacker, mix, options }: Traffic, tally: Tally): Promise<void> {
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
}

const PHASES: { name: string; attack?: (traffic: Traffic, tally: Tally) => Promise<void> }[] = [
  { name: 'phase 0: victim alone' },
  { name: 'phase 1: keyword attack', attack: keywordAttack },
  { name: 'phase 2: MCP attack', attack: mcpAttack },
];

/** The three phases one after the other, each the victim's browsing alongside its attack. */
export async function runPhases(traffic: Traffic, log: (message: string) => void): Promise<PhaseResult[]> {
  const results: PhaseResult[] = [];
  for (const phase of PHASES) {
    log(`${phase.name} (${traffic.options.seconds} s)…`);
    const tally = new Tally();
    const [samples] = await Promise.all([browse(traffic), phase.attack?.(traffic, tally)]);
    results.push({ name: phase.name, victim: summarizeVictim(samples), attacker: phase.attack ? `${tally}` : '—' });
    // Let the attack's last requests drain before the next phase.
    await sleep(2000);
  }
  return results;
}
