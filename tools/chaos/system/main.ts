/**
 * The whole system under faults (`npm run chaos:system`). In a database and a RabbitMQ vhost of its
 * own it runs the six apps as processes (two gateway replicas behind the drill's own round-robin
 * load balancer), two webhook endpoints on loopback receivers, a steady bounded API load (mixed
 * routes, one paid key) and a steady bounded stream of observations (new auctions, their updates
 * and their ends). Then, one after the other with a pause between: a SIGTERM rolling restart of
 * each app (a gateway leaves the rotation before its SIGTERM, as Kubernetes removes the endpoint,
 * and its replacement joins once ready; any other app's replacement is ready before the old one
 * gets SIGTERM), a SIGKILL of each app (restarted as a Deployment would), a RabbitMQ restart and a
 * PostgreSQL restart. It reports, per fault, the API requests that failed in its window (by status;
 * connection errors and timeouts as their own kinds) and the time to recover without an operator
 * (every app ready, API probes answered through every gateway, and the first auction published
 * after the fault delivered as a webhook); then the end state: every observation applied once,
 * each auction's events what the emission rules give, every (event, subscription) pair received,
 * the ledgers exact, nothing left `sending`, nothing reserved.
 *
 * Exit 0 when every end-state check passes, every fault recovered and the SIGTERM rolls failed no
 * request; else 1. It restarts this machine's PostgreSQL and RabbitMQ unless --skip-restarts:
 * run it alone. Flags (all optional):
 *   --rate N            API requests per second (default 50)
 *   --ingest-rate N     observations per second (default 100: a third new auctions, a third
 *                       updates, a third ends)
 *   --faults LIST       comma-separated fault ids or prefixes (default all): term, kill,
 *                       term:query, kill:gateway, kill:gateway#2, rabbitmq, postgres, …
 *   --skip-restarts     no RabbitMQ or PostgreSQL restart (only the drill's own processes)
 *   --pause S           seconds between faults (default 5)
 *   --recovery-timeout S  how long a fault may take to recover (default 120)
 *   --max-auctions N    new auctions at most (default 12000; keeps the deliveries within the
 *                       subscriber's 100K allowance)
 */
import { ChildProcess, execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { createAccount, getUsage } from '@cars/accounts';
import { Queues } from '@cars/contracts';
import { assertObservationTopology } from '@cars/messaging';
import { createDataSource, pgPoolOf } from '@cars/persistence';
import { freePort } from '@cars/runtime';
import { generateMasterKey } from '@cars/signing';
import { ConfirmChannel, connect } from 'amqplib';
import { Pool } from 'pg';
import {
  createDatabase,
  createVhost,
  deleteVhost,
  dropDatabase,
  log,
  markdownTable,
  restartPostgres,
  restartRabbitMq,
  ROOT,
  sleep,
} from '../common/infra';
import { AppName, Exit, isRunning, spawnApp, statusOf, stopProcess, waitForReady } from '../common/processes';
import { Arrival, ReceiverRoute, startReceivers } from '../common/receivers';

const { values: flags } = parseArgs({
  strict: true,
  options: {
    rate: { type: 'string', default: '50' },
    'ingest-rate': { type: 'string', default: '100' },
    faults: { type: 'string', default: 'all' },
    'skip-restarts': { type: 'boolean', default: false },
    pause: { type: 'string', default: '5' },
    'recovery-timeout': { type: 'string', default: '120' },
    'max-auctions': { type: 'string', default: '12000' },
  },
});

function numberFlag(name: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max) {
    console.error(`chaos:system: --${name} must be a number from ${min} to ${max}`);
    process.exit(2);
  }
  return n;
}

const API_RATE = numberFlag('rate', flags.rate, 1, 500);
const INGEST_RATE = numberFlag('ingest-rate', flags['ingest-rate'], 3, 1000);
const PAUSE_MS = numberFlag('pause', flags.pause, 0, 600) * 1000;
const RECOVERY_TIMEOUT_MS = numberFlag('recovery-timeout', flags['recovery-timeout'], 5, 1800) * 1000;
const MAX_AUCTIONS = numberFlag('max-auctions', flags['max-auctions'], 10, 15_000);

const REDIS_URL = process.env.CHAOS_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** How long an app may take to become ready, and to stop after SIGTERM (its deadline is 10 s). */
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 20_000;
/** Kubernetes' preStop: how long a gateway out of the rotation waits before its SIGTERM. */
const PRESTOP_MS = 500;
/** How long a killed process stays down before the replacement starts (a Deployment's reaction). */
const KILL_RESTART_DELAY_MS = 1000;
const REQUEST_TIMEOUT_MS = 15_000;
const MAX_IN_FLIGHT = Math.max(50, API_RATE * 10);
/** An auction's update is observed this long after its creation, and its end twice as long after. */
const STEP_MS = 3000;
const MAX_RUN_MS = 60 * 60_000;

/** The processes: two gateway replicas and one of each other app. */
const SLOT_LABELS = ['gateway#1', 'gateway#2', 'query', 'stats', 'webhooks', 'change-detector', 'delivery-worker'] as const;
type SlotLabel = (typeof SLOT_LABELS)[number];

type FaultKind = 'term' | 'kill' | 'rabbitmq' | 'postgres';
interface FaultSpec {
  id: string;
  kind: FaultKind;
  slot?: SlotLabel;
  title: string;
}

const ALL_FAULTS: FaultSpec[] = [
  ...SLOT_LABELS.map((slot) => ({ id: `term:${slot}`, kind: 'term' as const, slot, title: `SIGTERM roll ${slot}` })),
  ...SLOT_LABELS.map((slot) => ({ id: `kill:${slot}`, kind: 'kill' as const, slot, title: `SIGKILL ${slot}` })),
  { id: 'rabbitmq', kind: 'rabbitmq', title: 'RabbitMQ restart (stop_app/start_app)' },
  { id: 'postgres', kind: 'postgres', title: 'PostgreSQL restart (pg_ctlcluster -m fast)' },
];

function selectFaults(): FaultSpec[] {
  const tokens = flags.faults.split(',').map((t) => t.trim()).filter(Boolean);
  const matches = (id: string, token: string) => token === 'all' || id === token || id.startsWith(`${token}:`) || id.startsWith(`${token}#`);
  for (const token of tokens) {
    if (!ALL_FAULTS.some((f) => matches(f.id, token))) {
      console.error(`chaos:system: unknown fault "${token}" (faults: ${ALL_FAULTS.map((f) => f.id).join(', ')})`);
      process.exit(2);
    }
  }
  const selected = ALL_FAULTS.filter((f) => tokens.some((t) => matches(f.id, t)));
  return flags['skip-restarts'] ? selected.filter((f) => f.kind !== 'rabbitmq' && f.kind !== 'postgres') : selected;
}
const FAULTS = selectFaults();

interface Slot {
  label: SlotLabel;
  app: AppName;
  child: ChildProcess | null;
  /** The gateway's HTTP port, or the app's health port. */
  port: number;
  generation: number;
  /** Gateways: the load balancer sends to it. */
  inRotation: boolean;
  /** Gateways: a fault has it out of the rotation; the health check must not put it back. */
  held: boolean;
}

interface RequestRecord {
  start: number;
  end: number;
  route: string;
  /** The gateway it went to. */
  gateway: string;
  /** `200`, `HTTP 503`, `connection error (ECONNREFUSED)`, `timeout`, … */
  outcome: string;
  ok: boolean;
}

interface FaultResult {
  spec: FaultSpec;
  start: number;
  actionAt: number;
  end: number;
  recoveredMs: number | null;
  notes: string[];
}

/** Everything the clean-up must reach, even when the drill fails half-way or is interrupted. */
const state = {
  children: new Set<ChildProcess>(),
  databaseName: '',
  vhost: '',
  closers: [] as (() => Promise<void>)[],
  finishing: false,
};

let cleaning: Promise<void> | null = null;
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    state.finishing = true;
    await Promise.all([...state.children].filter(isRunning).map((child) => stopProcess(child, 'SIGTERM', 12_000)));
    for (const close of state.closers.splice(0)) await close().catch(() => undefined);
    if (state.databaseName) await dropDatabase(state.databaseName);
    if (state.vhost) deleteVhost(state.vhost);
  })();
  return cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping every process and removing the database and vhost`);
    void cleanUp().finally(() => process.exit(130));
  });
}
process.on('exit', () => {
  for (const child of state.children) if (isRunning(child)) child.kill('SIGKILL');
});

/**
 * Observations to the `observations` queue over a confirm channel that reconnects by itself: a
 * message the broker did not confirm before the connection went is published again (a duplicate
 * observation, which the change-detector must absorb).
 */
class ObservationPublisher {
  private channel: ConfirmChannel | null = null;
  private connecting = false;
  private lastAttempt = 0;
  private readonly queue: Buffer[] = [];
  private readonly unconfirmed = new Set<Buffer>();
  republished = 0;

  constructor(private readonly url: string) {}

  publish(body: Buffer): void {
    this.queue.push(body);
    this.flush();
  }

  get outstanding(): number {
    return this.queue.length + this.unconfirmed.size;
  }

  flush(): void {
    if (!this.channel) {
      void this.reconnect();
      return;
    }
    const channel = this.channel;
    while (this.queue.length > 0 && this.channel === channel) {
      const body = this.queue.shift()!;
      this.unconfirmed.add(body);
      try {
        channel.sendToQueue(Queues.Observations, body, { persistent: true, contentType: 'application/json' }, (error) => {
          if (!this.unconfirmed.delete(body)) return; // already handed back when the channel went
          if (error) this.queue.push(body);
        });
      } catch {
        this.unconfirmed.delete(body);
        this.queue.unshift(body);
        this.lost(channel);
      }
    }
  }

  private lost(channel: ConfirmChannel): void {
    if (this.channel !== channel) return;
    this.channel = null;
    this.republished += this.unconfirmed.size;
    this.queue.unshift(...this.unconfirmed);
    this.unconfirmed.clear();
  }

  private async reconnect(): Promise<void> {
    if (this.connecting || Date.now() - this.lastAttempt < 500 || state.finishing) return;
    this.connecting = true;
    this.lastAttempt = Date.now();
    try {
      const connection = await connect(this.url);
      connection.on('error', () => undefined);
      const channel = await connection.createConfirmChannel();
      channel.on('error', () => undefined);
      const lost = () => this.lost(channel);
      connection.on('close', lost);
      channel.on('close', lost);
      await assertObservationTopology(channel);
      this.channel = channel;
      this.closeConnection = () => connection.close().catch(() => undefined);
    } catch {
      // the broker is away: the next flush tries again
    } finally {
      this.connecting = false;
    }
    this.flush();
  }

  closeConnection: () => Promise<unknown> = async () => undefined;
}

const MAKES: [string, string][] = [
  ['Porsche', '911'],
  ['Chevrolet', 'Corvette'],
  ['Jaguar', 'E-Type'],
];

/** A source wall-clock time (no offset). */
const wallClock = (ms: number) => new Date(ms).toISOString().slice(0, 19);

/**
 * The observation stream: each auction is observed three times — new (active, one bid), updated
 * STEP_MS later (price and bid count up, a second bid) and ended 2 × STEP_MS later (sold). Every
 * auction and every bid is new to the database, so every one is eligible.
 */
class ObservationStream {
  readonly createdAt: number[] = [];
  private readonly due: { at: number; n: number; step: 1 | 2 }[] = [];
  private creating = true;
  private credit = 0;
  private last = Date.now();
  published = 0;

  constructor(
    private readonly tag: string,
    private readonly publisher: ObservationPublisher,
    private readonly rate: number,
  ) {}

  key(n: number): string {
    return `${this.tag}-${n}`;
  }

  url(n: number): string {
    return `https://bringatrailer.com/listing/${this.key(n)}`;
  }

  stopCreating(): void {
    this.creating = false;
  }

  /** Every auction --max-auctions allows is created. */
  get exhausted(): boolean {
    return this.createdAt.length >= MAX_AUCTIONS;
  }

  get done(): boolean {
    return !this.creating && this.due.length === 0;
  }

  private observation(n: number, step: 0 | 1 | 2): Buffer {
    const [make, model] = MAKES[n % MAKES.length];
    const base = 20_000 + (n % 500) * 1000;
    const price = step === 0 ? base : base + 1000;
    const created = this.createdAt[n];
    const bid = (i: number) => ({
      source_bid_id: `${this.key(n)}-b${i}`,
      bidder_name: `bidder${i}`,
      amount: i === 1 ? base : base + 1000,
      currency: 'USD',
      bid_at: wallClock(created + (i - 1) * STEP_MS),
    });
    return Buffer.from(
      JSON.stringify({
        source: 'bringatrailer',
        source_auction_id: this.key(n),
        observed_at: new Date().toISOString(),
        auction: {
          url: this.url(n),
          title: `${1960 + (n % 30)} ${make} ${model} ${this.key(n)}`,
          status: step === 2 ? 'sold' : 'active',
          price,
          currency: 'USD',
          year: 1960 + (n % 30),
          make,
          model,
          auction_end_at: wallClock(created + 7 * 24 * 3600_000),
          bid_count: step === 0 ? 1 : 2,
          sale_type: 'auction',
          price_type: 'bid',
        },
        bids: step === 0 ? [bid(1)] : [bid(1), bid(2)],
      }),
    );
  }

  /** Publishes what is due: updates and ends first, then new auctions at a third of the rate. */
  tick(): void {
    const now = Date.now();
    while (this.due.length > 0 && this.due[0].at <= now) {
      const { n, step } = this.due.shift()!;
      this.publisher.publish(this.observation(n, step));
      this.published += 1;
      if (step === 1) this.due.push({ at: this.createdAt[n] + 2 * STEP_MS, n, step: 2 });
    }
    this.credit = Math.min(this.credit + ((now - this.last) / 1000) * (this.rate / 3), this.rate);
    this.last = now;
    while (this.creating && this.credit >= 1 && this.createdAt.length < MAX_AUCTIONS) {
      this.credit -= 1;
      const n = this.createdAt.length;
      this.createdAt.push(Date.now());
      this.publisher.publish(this.observation(n, 0));
      this.published += 1;
      this.due.push({ at: this.createdAt[n] + STEP_MS, n, step: 1 });
    }
    if (this.createdAt.length >= MAX_AUCTIONS) this.creating = false;
    this.publisher.flush();
  }
}

const run = promisify(execFile);

async function main(): Promise<number> {
  const started = Date.now();
  const id = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const name = `cars_chaos_system_${id}`;
  const tag = `chaos-${id}`;
  const logDir = mkdtempSync(join(tmpdir(), 'cars-chaos-system-'));
  log(`faults: ${FAULTS.map((f) => f.id).join(', ') || '(none)'}; app logs in ${logDir}`);

  state.databaseName = name;
  const databaseUrl = await createDatabase(name);
  state.vhost = name;
  const rabbitUrl = createVhost(name);
  await run(process.execPath, [join(ROOT, 'dist', 'tools', 'admin', 'src', 'main.js'), 'db:migrate'], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
  });
  const pool = new Pool({ connectionString: databaseUrl, max: 3 });
  pool.on('error', () => undefined);
  state.closers.push(() => pool.end());

  // Two accounts on the 100K plan: one for the API load (its own ledger), one that owns the webhooks.
  const setup = await createDataSource({ url: databaseUrl, poolSize: 1 }).initialize();
  const loadAccount = await createAccount(pgPoolOf(setup), { email: `chaos-load-${randomUUID()}@example.test`, plan: '100k', emailVerified: true });
  const subscriber = await createAccount(pgPoolOf(setup), { email: `chaos-hooks-${randomUUID()}@example.test`, plan: '100k', emailVerified: true });
  await setup.destroy();
  const loadKey = loadAccount.key.apiKey;
  const hooksKey = subscriber.key.apiKey;

  const routes = new Map<string, ReceiverRoute>();
  const arrivals: Arrival[] = [];
  const problems: string[] = [];
  const receivers = await startReceivers(routes, arrivals, problems);
  state.closers.push(receivers.close);

  // The apps.
  const masterKey = generateMasterKey();
  const common: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    RABBITMQ_URL: rabbitUrl,
    WEBHOOK_SECRET_KEY: masterKey,
    WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true',
    LOG_LEVEL: 'warn',
    DATABASE_POOL_SIZE: '4',
  };
  const perApp: Record<AppName, Record<string, string>> = {
    gateway: {
      HOST: '127.0.0.1',
      REDIS_URL,
      REDIS_KEY_PREFIX: `cars-chaos-${id}:`,
      BURST_RATE_PER_SECOND: String(Math.max(100, API_RATE * 4)),
      BURST_CAPACITY: String(Math.max(1000, API_RATE * 20)),
      METERING_POOL_SIZE: '4',
    },
    query: {},
    stats: {},
    webhooks: {},
    'change-detector': {},
    'delivery-worker': {
      DATABASE_POOL_SIZE: '6',
      DELIVERY_RETRY_DELAYS_MS: '200,400,800,1600,3200',
      DELIVERY_SWEEP_INTERVAL_MS: '200',
      DELIVERY_RECEIVER_TIMEOUT_MS: '2000',
      DELIVERY_LEASE_MS: '15000',
    },
  };
  const slots: Slot[] = SLOT_LABELS.map((label) => ({
    label,
    app: (label.startsWith('gateway') ? 'gateway' : label) as AppName,
    child: null,
    port: 0,
    generation: 0,
    inRotation: false,
    held: false,
  }));
  const slotOf = (label: SlotLabel) => slots.find((s) => s.label === label)!;
  const readyUrl = (port: number) => `http://127.0.0.1:${port}/health/ready`;
  /** Processes the drill stops on purpose; any other exit is a crash. */
  const intended = new WeakSet<ChildProcess>();
  const crashes: string[] = [];
  const sigtermExits: { label: string; exit: Exit }[] = [];

  const launch = async (slot: Slot): Promise<{ child: ChildProcess; port: number }> => {
    const port = await freePort();
    slot.generation += 1;
    const portEnv: Record<string, string> = slot.app === 'gateway' ? { PORT: String(port) } : { HEALTH_PORT: String(port) };
    const child = spawnApp(slot.app, { ...common, ...perApp[slot.app], ...portEnv }, join(logDir, `${slot.label}.${slot.generation}.log`));
    state.children.add(child);
    // Like a Deployment: a process that exits by itself is counted and started again.
    child.once('exit', (code, signal) => {
      state.children.delete(child);
      if (state.finishing || intended.has(child)) return;
      crashes.push(`${slot.label} (${signal ?? `code ${code}`})`);
      log(`${slot.label} exited by itself (${signal ?? `code ${code}`}); starting it again`);
      if (slot.child !== child) return;
      slot.child = null;
      slot.inRotation = false;
      void launch(slot).then((next) => {
        slot.child = next.child;
        slot.port = next.port;
      });
    });
    return { child, port };
  };
  /** Starts the slot's next process and waits until it is ready (false when it is not). */
  const launchReady = async (slot: Slot): Promise<{ child: ChildProcess; port: number } | null> => {
    const next = await launch(slot);
    if (await waitForReady(readyUrl(next.port), next.child, READY_TIMEOUT_MS)) return next;
    intended.add(next.child);
    await stopProcess(next.child, 'SIGKILL', 5000);
    return null;
  };

  log('starting the apps (two gateway replicas)');
  const first = await Promise.all(slots.map((slot) => launchReady(slot)));
  first.forEach((next, i) => {
    if (!next) throw new Error(`${slots[i].label} did not become ready (log: ${logDir})`);
    slots[i].child = next.child;
    slots[i].port = next.port;
    if (slots[i].app === 'gateway') slots[i].inRotation = true;
  });

  // The load balancer: round robin over the gateways in the rotation. A connection-level error takes
  // a gateway out (as a failing readiness probe would); the health check puts it back once ready,
  // unless a fault holds it out.
  let turn = 0;
  const pick = (): Slot | null => {
    // The balancer knows only its rotation, not whether the process behind an entry still lives.
    const ready = slots.filter((s) => s.app === 'gateway' && s.inRotation && s.child);
    return ready.length === 0 ? null : ready[turn++ % ready.length];
  };
  let healthChecking = true;
  const healthCheck = (async () => {
    while (healthChecking) {
      for (const slot of slots) {
        if (slot.app !== 'gateway' || slot.inRotation || slot.held || !isRunning(slot.child)) continue;
        if ((await statusOf(readyUrl(slot.port))) === 200) {
          slot.inRotation = true;
          log(`${slot.label} is back in the rotation`);
        }
      }
      await sleep(500);
    }
  })();

  const send = async (path: string, key: string | null, init: RequestInit = {}): Promise<{ status: number | null; outcome: string; body: string; slot: Slot | null }> => {
    const slot = pick();
    if (!slot) return { status: null, outcome: 'no gateway in rotation', body: '', slot };
    const headers: Record<string, string> = { ...(init.headers as Record<string, string>) };
    if (key) headers.authorization = `Bearer ${key}`;
    try {
      const res = await fetch(`http://127.0.0.1:${slot.port}${path}`, { ...init, headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
      const body = await res.text();
      return { status: res.status, outcome: res.status === 200 ? '200' : `HTTP ${res.status}`, body, slot };
    } catch (error) {
      const e = error as { name?: string; cause?: { code?: string; name?: string; message?: string } };
      if (e.name === 'TimeoutError' || e.name === 'AbortError') return { status: null, outcome: 'timeout', body: '', slot };
      const code = e.cause?.code ?? e.cause?.name ?? e.name ?? 'error';
      if (slot.inRotation) {
        slot.inRotation = false;
        log(`${slot.label} out of the rotation after a connection error (${code})`);
      }
      return { status: null, outcome: `connection error (${code})`, body: '', slot };
    }
  };

  // Webhook endpoints, created through the API: every event type, and Porsche creations and ends.
  for (const [path, body, behaviour] of [
    ['/all', { event_types: ['auction.created', 'auction.updated', 'auction.ended', 'bid.created'] }, {}],
    ['/porsche', { event_types: ['auction.created', 'auction.ended'], filters: { make: 'Porsche' } }, { failRate: 0.05 }],
  ] as const) {
    const created = await send('/webhooks', hooksKey, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:${receivers.port}${path}`, ...body }),
    });
    if (created.status !== 201) throw new Error(`POST /webhooks answered ${created.outcome}: ${created.body}`);
    const answer = JSON.parse(created.body) as { secret: string };
    routes.set(path, { secret: answer.secret, ...behaviour });
  }

  // The API load: a fixed mix at a fixed rate (open loop), at most MAX_IN_FLIGHT at once.
  const knownAuctionIds: string[] = [];
  const METERED = new Set(['/auctions', '/auctions/live', '/auctions/:id/bids', '/stats']);
  const mix: { route: string; key: boolean; path: () => string }[] = [
    { route: '/auctions', key: true, path: () => '/auctions?limit=10' },
    { route: '/auctions/live', key: true, path: () => '/auctions/live?limit=10' },
    { route: '/auctions', key: true, path: () => '/auctions?make=Porsche&limit=5' },
    { route: '/makes', key: false, path: () => '/makes' },
    { route: '/stats', key: true, path: () => '/stats?make=Porsche' },
    { route: '/models', key: false, path: () => '/models?make=Porsche' },
    { route: '/auctions/:id/bids', key: true, path: () => `/auctions/${knownAuctionIds[Math.floor(Math.random() * knownAuctionIds.length)] ?? '1'}/bids` },
    { route: '/auctions/live', key: true, path: () => '/auctions/live?make=Jaguar&limit=5' },
  ];
  const records: RequestRecord[] = [];
  /** Responses the gateway must have counted against the load account (metered route, 2xx or 404). */
  let countedByClient = 0;
  const countIfMetered = (route: string, status: number | null) => {
    if (METERED.has(route) && status !== null && (status < 400 || status === 404)) countedByClient += 1;
  };
  const harvest = (body: string) => {
    try {
      for (const row of (JSON.parse(body) as { data?: { id?: string }[] }).data ?? []) {
        if (row.id && !knownAuctionIds.includes(row.id)) knownAuctionIds.push(row.id);
      }
      knownAuctionIds.splice(0, Math.max(0, knownAuctionIds.length - 50));
    } catch {
      // not a list
    }
  };
  let inFlight = 0;
  let loadRunning = true;
  const load = (async () => {
    const t0 = Date.now();
    for (let i = 0; loadRunning && Date.now() - t0 < MAX_RUN_MS; i += 1) {
      const wait = t0 + (i * 1000) / API_RATE - Date.now();
      if (wait > 0) await sleep(wait);
      const entry = mix[i % mix.length];
      const record: RequestRecord = { start: Date.now(), end: 0, route: entry.route, gateway: '', outcome: '', ok: false };
      records.push(record);
      if (inFlight >= MAX_IN_FLIGHT) {
        record.outcome = 'not sent (client at its in-flight cap)';
        continue;
      }
      inFlight += 1;
      void send(entry.path(), entry.key ? loadKey : null).then((answer) => {
        inFlight -= 1;
        record.end = Date.now();
        record.gateway = answer.slot?.label ?? '';
        record.outcome = answer.outcome;
        record.ok = answer.status === 200 || (answer.status === 404 && entry.route === '/auctions/:id/bids');
        countIfMetered(entry.route, answer.status);
        if (answer.status === 200 && entry.route.startsWith('/auctions') && !entry.route.includes('bids')) harvest(answer.body);
      });
    }
  })();
  const waitForLoadDrain = async () => {
    for (let i = 0; i < 200 && inFlight > 0; i += 1) await sleep(100);
  };

  // The observation stream.
  const publisher = new ObservationPublisher(rabbitUrl);
  state.closers.push(async () => void (await publisher.closeConnection()));
  const stream = new ObservationStream(tag, publisher, INGEST_RATE);
  let ingesting = true;
  const ingest = (async () => {
    const t0 = Date.now();
    while (ingesting && !stream.done && Date.now() - t0 < MAX_RUN_MS) {
      stream.tick();
      await sleep(50);
    }
  })();

  // What has arrived where: the first arrival of each auction's auction.created at /all.
  const createdArrivals = new Map<string, number>();
  let scanned = 0;
  const scanArrivals = () => {
    for (; scanned < arrivals.length; scanned += 1) {
      const a = arrivals[scanned];
      if (a.path === '/all' && a.type === 'auction.created' && a.subject && !createdArrivals.has(a.subject)) createdArrivals.set(a.subject, a.at);
    }
  };

  /** Recovered: every app ready, API probes answered by every gateway, the first auction published after `since` delivered. */
  const recovered = async (since: number): Promise<boolean> => {
    for (const slot of slots) {
      if (!isRunning(slot.child) || (await statusOf(readyUrl(slot.port))) !== 200) return false;
      if (slot.app === 'gateway' && !slot.inRotation) return false;
    }
    for (const slot of slots.filter((s) => s.app === 'gateway')) {
      for (const [path, key, route] of [
        ['/auctions?limit=1', loadKey, '/auctions'],
        ['/stats?make=Porsche', loadKey, '/stats'],
        ['/webhooks', hooksKey, '/webhooks'],
      ] as const) {
        try {
          const res = await fetch(`http://127.0.0.1:${slot.port}${path}`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
          await res.arrayBuffer();
          countIfMetered(route, res.status);
          if (res.status !== 200) return false;
        } catch {
          return false;
        }
      }
    }
    const n = stream.createdAt.findIndex((at) => at >= since);
    if (n < 0) return stream.exhausted; // --max-auctions reached: no auction left to follow
    scanArrivals();
    return createdArrivals.has(stream.url(n));
  };
  const waitRecovered = async (since: number): Promise<number | null> => {
    const deadline = since + RECOVERY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (await recovered(since)) return Date.now();
      await sleep(200);
    }
    return null;
  };

  const terminate = async (slot: Slot, child: ChildProcess, notes: string[]) => {
    intended.add(child);
    const exit = await stopProcess(child, 'SIGTERM', STOP_TIMEOUT_MS);
    sigtermExits.push({ label: slot.label, exit });
    notes.push(exit.forced ? `old process killed after ${STOP_TIMEOUT_MS / 1000} s` : `old process exited ${exit.signal ?? `code ${exit.code}`} in ${(exit.ms / 1000).toFixed(1)} s`);
  };
  const replace = async (slot: Slot, notes: string[]): Promise<boolean> => {
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      const next = await launchReady(slot);
      if (next) {
        slot.child = next.child;
        slot.port = next.port;
        return true;
      }
      notes.push(`replacement #${attempt} did not become ready`);
    }
    return false;
  };

  const runFault = async (spec: FaultSpec): Promise<FaultResult> => {
    const result: FaultResult = { spec, start: Date.now(), actionAt: 0, end: 0, recoveredMs: null, notes: [] };
    const slot = spec.slot ? slotOf(spec.slot) : null;
    log(`fault: ${spec.title}`);
    try {
      if (spec.kind === 'term' && slot && slot.app === 'gateway') {
        const old = slot.child!;
        slot.held = true;
        slot.inRotation = false;
        await sleep(PRESTOP_MS);
        result.actionAt = Date.now();
        await terminate(slot, old, result.notes);
        if (await replace(slot, result.notes)) slot.inRotation = true;
        slot.held = false;
      } else if (spec.kind === 'term' && slot) {
        const old = slot.child!;
        const next = await launchReady(slot);
        if (!next) {
          result.notes.push('the replacement did not become ready: the old process was left running');
        } else {
          slot.child = next.child;
          slot.port = next.port;
          result.actionAt = Date.now();
          await terminate(slot, old, result.notes);
        }
      } else if (spec.kind === 'kill' && slot) {
        const old = slot.child!;
        intended.add(old);
        if (slot.app === 'gateway') slot.held = true; // the balancer finds out by itself
        result.actionAt = Date.now();
        old.kill('SIGKILL');
        await sleep(KILL_RESTART_DELAY_MS);
        if ((await replace(slot, result.notes)) && slot.app === 'gateway') slot.inRotation = true;
        slot.held = false;
      } else if (spec.kind === 'rabbitmq') {
        result.actionAt = Date.now();
        await restartRabbitMq();
        result.notes.push(`RabbitMQ back after ${((Date.now() - result.actionAt) / 1000).toFixed(1)} s`);
      } else if (spec.kind === 'postgres') {
        result.actionAt = Date.now();
        await restartPostgres();
        result.notes.push(`PostgreSQL back after ${((Date.now() - result.actionAt) / 1000).toFixed(1)} s`);
      }
    } catch (error) {
      result.notes.push(`the fault step failed: ${String(error)}`);
    }
    result.actionAt ||= Date.now();
    const at = await waitRecovered(result.actionAt);
    if (stream.exhausted) result.notes.push('--max-auctions reached: recovery without the webhook probe');
    result.end = at ?? Date.now();
    result.recoveredMs = at === null ? null : at - result.actionAt;
    log(`  ${at === null ? `NOT recovered within ${RECOVERY_TIMEOUT_MS / 1000} s` : `recovered in ${((at - result.actionAt) / 1000).toFixed(1)} s`}`);
    return result;
  };

  // Warm-up, then the faults one after the other.
  log(`load: ${API_RATE} API requests/s over the rotation, ${INGEST_RATE} observations/s`);
  await sleep(Math.max(PAUSE_MS, 8000));
  const preflight = await waitRecovered(Date.now());
  if (preflight === null) throw new Error(`the system never became healthy before the first fault (logs: ${logDir})`);
  const results: FaultResult[] = [];
  for (const spec of FAULTS) {
    results.push(await runFault(spec));
    await sleep(PAUSE_MS);
  }

  // The end: no new auctions; the pending updates and ends go out; the API load stops.
  stream.stopCreating();
  log(`faults done; ${stream.createdAt.length} auctions created, publishing their last updates and ends`);
  const loadEnd = Date.now();
  loadRunning = false;
  await load;
  await waitForLoadDrain();
  await ingest.catch(() => undefined);
  ingesting = false;
  for (let i = 0; i < 600 && publisher.outstanding > 0; i += 1) {
    publisher.flush();
    await sleep(100);
  }
  const auctions = stream.createdAt.length;
  log(`${stream.published} observations published (${publisher.republished} sent again after a lost connection); waiting for the pipeline to settle`);

  // Settled: every auction in its final state, every event relayed and fanned out, every delivery done.
  const like = `${tag}-%`;
  let stalledSince = Date.now();
  let lastProgress = '';
  const hardStop = Date.now() + 10 * 60_000;
  while (Date.now() - stalledSince < 60_000 && Date.now() < hardStop) {
    try {
      const { rows } = await pool.query(
        `SELECT (SELECT count(*)::int FROM auctions WHERE source_auction_id LIKE $1 AND source_status = 'sold' AND bid_count = 2) AS final,
                (SELECT count(*)::int FROM events WHERE published_at IS NULL OR fanned_out_at IS NULL) AS unrelayed,
                (SELECT count(*)::int FROM webhook_deliveries WHERE status IN ('pending', 'sending')) AS open,
                (SELECT count(*)::int FROM webhook_deliveries) AS deliveries`,
        [like],
      );
      const progress = JSON.stringify({ ...rows[0], arrivals: arrivals.length });
      if (progress !== lastProgress) {
        lastProgress = progress;
        stalledSince = Date.now();
      }
      if (rows[0].final === auctions && rows[0].unrelayed === 0 && rows[0].open === 0) break;
    } catch {
      // PostgreSQL still coming back
    }
    await sleep(1000);
  }
  // A moment for the last receipts and ledger settlements, then every app stops (SIGTERM).
  await sleep(2000);
  healthChecking = false;
  await healthCheck;
  state.finishing = true;
  await Promise.all(slots.filter((s) => isRunning(s.child)).map((s) => stopProcess(s.child!, 'SIGTERM', STOP_TIMEOUT_MS)));
  const elapsed = (Date.now() - started) / 1000;

  // The fault table: requests by the window their start fell in.
  // A request belongs to the window in which its answer or error came; else to the window it was in
  // flight during (one lost with a process waits out the gateway's RPC timeout, which may end after
  // the recovery).
  const windowOf = (r: RequestRecord) => {
    const end = r.end || r.start;
    return results.find((f) => end >= f.start && end <= f.end) ?? results.find((f) => r.start <= f.end && end >= f.start) ?? null;
  };
  const byWindow = new Map<FaultResult | null, RequestRecord[]>();
  for (const r of records) {
    if (r.start > loadEnd) continue;
    const w = windowOf(r);
    byWindow.set(w, [...(byWindow.get(w) ?? []), r]);
  }
  const describeFailures = (list: RequestRecord[]) => {
    const kinds = new Map<string, number>();
    for (const r of list) if (!r.ok) kinds.set(r.outcome || 'no answer', (kinds.get(r.outcome || 'no answer') ?? 0) + 1);
    return [...kinds.entries()].map(([k, n]) => `${k} × ${n}`).join(', ') || '—';
  };
  const faultRows = results.map((f) => {
    const list = byWindow.get(f) ?? [];
    return [
      f.spec.title,
      ((f.end - f.start) / 1000).toFixed(1),
      String(list.length),
      String(list.filter((r) => !r.ok).length),
      describeFailures(list),
      f.recoveredMs === null ? `NOT within ${RECOVERY_TIMEOUT_MS / 1000} s` : (f.recoveredMs / 1000).toFixed(1),
      f.notes.join('; '),
    ];
  });
  const between = byWindow.get(null) ?? [];
  const failedLines = records
    .filter((r) => !r.ok && r.start <= loadEnd)
    .map((r) => {
      const w = windowOf(r);
      const took = r.end ? `${r.end - r.start} ms` : 'not sent';
      return `${new Date(r.start).toISOString()} ${w ? w.spec.id : 'outside'} ${r.route} via ${r.gateway || '-'}: ${r.outcome} (${took})`;
    });
  writeFileSync(join(logDir, 'failed-requests.log'), failedLines.join('\n') + '\n');
  faultRows.push(['(outside fault windows)', '', String(between.length), String(between.filter((r) => !r.ok).length), describeFailures(between), '', '']);

  // The end state.
  const checks: [string, string, boolean][] = [];
  const check = (what: string, value: string, ok: boolean) => checks.push([what, value, ok]);
  const one = async <T>(sql: string, params: unknown[] = []): Promise<T> => (await pool.query(sql, params)).rows[0] as T;

  const stored = await one<{ stored: number; final: number }>(
    `SELECT count(*)::int AS stored, count(*) FILTER (WHERE source_status = 'sold' AND bid_count = 2)::int AS final FROM auctions WHERE source_auction_id LIKE $1`,
    [like],
  );
  check('auction rows / distinct auctions published', `${stored.stored} / ${auctions}`, stored.stored === auctions);
  check('auctions in their final state (sold, 2 bids)', `${stored.final} / ${auctions}`, stored.final === auctions);
  const bids = await one<{ n: number }>(`SELECT count(*)::int AS n FROM bids b JOIN auctions a ON a.id = b.auction_id WHERE a.source_auction_id LIKE $1`, [like]);
  check('bid rows / bids published', `${bids.n} / ${auctions * 2}`, bids.n === auctions * 2);

  const perAuction = (
    await pool.query<{ created: number; updated: number; ended: number; bid_events: number; created_status: string | null; created_price: string | null; price: string }>(
      `SELECT count(e.seq) FILTER (WHERE e.type = 'auction.created')::int AS created,
              count(e.seq) FILTER (WHERE e.type = 'auction.updated')::int AS updated,
              count(e.seq) FILTER (WHERE e.type = 'auction.ended')::int AS ended,
              count(e.seq) FILTER (WHERE e.type = 'bid.created')::int AS bid_events,
              max(e.payload::jsonb #>> '{data,auction,status}') FILTER (WHERE e.type = 'auction.created') AS created_status,
              max(e.payload::jsonb #>> '{data,auction,price}') FILTER (WHERE e.type = 'auction.created') AS created_price,
              a.price::text AS price
         FROM auctions a LEFT JOIN events e ON e.auction_id = a.id
        WHERE a.source_auction_id LIKE $1
        GROUP BY a.id`,
      [like],
    )
  ).rows;
  const dupCreated = perAuction.filter((a) => a.created > 1).length;
  const noCreated = perAuction.filter((a) => a.created === 0).length;
  check('auctions with a duplicate / no auction.created', `${dupCreated} / ${noCreated}`, dupCreated === 0 && noCreated === 0);
  // First seen active: exactly one auction.ended later. First seen sold (its three observations
  // applied together): created only. One auction.updated at most, none when the creation already
  // carried the updated price.
  const wrongEnded = perAuction.filter((a) => (a.created_status === 'active' ? a.ended !== 1 : a.ended !== 0)).length;
  const wrongUpdated = perAuction.filter((a) => a.updated > 1 || (a.updated === 1 && (a.created_status !== 'active' || a.created_price === a.price))).length;
  const wrongBids = perAuction.filter((a) => a.bid_events !== 2).length;
  check('auctions whose auction.ended count breaks the rules', String(wrongEnded), wrongEnded === 0);
  check('auctions whose auction.updated count breaks the rules', String(wrongUpdated), wrongUpdated === 0);
  check('auctions without exactly one bid.created per bid', String(wrongBids), wrongBids === 0);
  const eventTypes = await one<{ created: number; updated: number; ended: number; bid: number; bid_ids: number; unrelayed: number }>(
    `SELECT count(*) FILTER (WHERE type = 'auction.created')::int AS created, count(*) FILTER (WHERE type = 'auction.updated')::int AS updated,
            count(*) FILTER (WHERE type = 'auction.ended')::int AS ended, count(*) FILTER (WHERE type = 'bid.created')::int AS bid,
            count(DISTINCT payload::jsonb #>> '{data,bid,id}') FILTER (WHERE type = 'bid.created')::int AS bid_ids,
            count(*) FILTER (WHERE published_at IS NULL OR fanned_out_at IS NULL)::int AS unrelayed
       FROM events`,
  );
  check(
    'events created / updated / ended / bid.created (distinct bids)',
    `${eventTypes.created} / ${eventTypes.updated} / ${eventTypes.ended} / ${eventTypes.bid} (${eventTypes.bid_ids})`,
    eventTypes.bid === eventTypes.bid_ids,
  );
  check('events not relayed or not fanned out', String(eventTypes.unrelayed), eventTypes.unrelayed === 0);

  // Pairs: the subscriptions' rules applied to the events (both were active before the first observation).
  const expected = (
    await pool.query<{ event_id: string; subscription_id: string }>(
      `SELECT e.id AS event_id, s.id AS subscription_id FROM events e JOIN webhook_subscriptions s
          ON e.created_at >= s.active_since AND e.type = ANY (s.event_types)
         AND (s.filters ->> 'make' IS NULL OR lower(e.make) = lower(s.filters ->> 'make'))`,
    )
  ).rows;
  const pathOf = new Map(
    (await pool.query<{ id: string; url: string }>(`SELECT id, url FROM webhook_subscriptions`)).rows.map((s) => [s.id, new URL(s.url).pathname]),
  );
  const expectedKeys = new Set(expected.map((p) => `${pathOf.get(p.subscription_id)}|${p.event_id}`));
  const received = new Map<string, { all: number; ok: number }>();
  for (const a of arrivals) {
    const key = `${a.path}|${a.eventId}`;
    const entry = received.get(key) ?? { all: 0, ok: 0 };
    entry.all += 1;
    if (a.ok) entry.ok += 1;
    received.set(key, entry);
  }
  let missing = 0;
  for (const key of expectedKeys) if (!received.get(key)?.ok) missing += 1;
  let unexpected = 0;
  let duplicates = 0;
  for (const [key, entry] of received) {
    if (!expectedKeys.has(key)) unexpected += 1;
    if (entry.ok > 1) duplicates += entry.ok - 1;
  }
  const deliveries = await one<{ total: number; succeeded: number; failed: number; open: number; sending: number; canceled: number }>(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded, count(*) FILTER (WHERE status = 'failed')::int AS failed,
            count(*) FILTER (WHERE status = 'pending')::int AS open, count(*) FILTER (WHERE status = 'sending')::int AS sending,
            count(*) FILTER (WHERE status = 'canceled')::int AS canceled
       FROM webhook_deliveries`,
  );
  check('(event, subscription) pairs expected / delivery rows', `${expectedKeys.size} / ${deliveries.total}`, expectedKeys.size === deliveries.total && expectedKeys.size > 0);
  check('pairs received with a 2xx ≥ 1 time', `${expectedKeys.size - missing} / ${expectedKeys.size}`, missing === 0);
  check('receipts of no expected pair', String(unexpected), unexpected === 0);
  check('duplicate 2xx receipts (same webhook-id)', String(duplicates), true);
  check('requests failing verification or the id check', String(problems.length), problems.length === 0);
  check(
    'deliveries succeeded / failed / canceled',
    `${deliveries.succeeded} / ${deliveries.failed} / ${deliveries.canceled}`,
    deliveries.succeeded === deliveries.total && deliveries.failed === 0 && deliveries.canceled === 0,
  );
  check('deliveries left pending / sending', `${deliveries.open} / ${deliveries.sending}`, deliveries.open === 0 && deliveries.sending === 0);
  const hooksUsage = await getUsage(pool, subscriber.account.id);
  check('subscriber units used / succeeded deliveries', `${hooksUsage.used} / ${deliveries.succeeded}`, hooksUsage.used === deliveries.succeeded);
  check('subscriber units still reserved', String(hooksUsage.reserved), hooksUsage.reserved === 0);

  // The API account: what the gateways counted against what the client saw answered. A gateway
  // killed with SIGKILL, or a ledger statement lost to a PostgreSQL restart, leaves units reserved
  // by design (UsageMeter.settle: never units the customer gains); then only the bounds are exact.
  const apiUsage = await getUsage(pool, loadAccount.account.id);
  const lossy = results.some((f) => (f.spec.kind === 'kill' && f.spec.slot?.startsWith('gateway')) || f.spec.kind === 'postgres');
  if (lossy) {
    check(
      'API units used ≤ counted responses seen ≤ used + reserved',
      `${apiUsage.used} ≤ ${countedByClient} ≤ ${apiUsage.used + apiUsage.reserved}`,
      apiUsage.used <= countedByClient && countedByClient <= apiUsage.used + apiUsage.reserved,
    );
    check('API units left reserved (killed gateway / restarted database: by design)', String(apiUsage.reserved), true);
  } else {
    check('API units used / counted responses seen', `${apiUsage.used} / ${countedByClient}`, apiUsage.used === countedByClient);
    check('API units still reserved', String(apiUsage.reserved), apiUsage.reserved === 0);
  }
  check('processes that exited by themselves', crashes.length === 0 ? '0' : crashes.join(', '), crashes.length === 0);
  const badStops = sigtermExits.filter((s) => s.exit.forced || s.exit.code !== 0);
  check(
    'SIGTERM stops that did not exit 0 in time',
    badStops.length === 0 ? `0 of ${sigtermExits.length}` : badStops.map((s) => `${s.label}: ${s.exit.forced ? 'killed' : (s.exit.signal ?? `code ${s.exit.code}`)}`).join(', '),
    badStops.length === 0,
  );
  const termFailures = results.filter((f) => f.spec.kind === 'term').reduce((sum, f) => sum + (byWindow.get(f) ?? []).filter((r) => !r.ok).length, 0);
  check('failed API requests during SIGTERM rolls', String(termFailures), termFailures === 0);
  const unrecovered = results.filter((f) => f.recoveredMs === null).map((f) => f.spec.id);
  check('faults not recovered in time', unrecovered.length === 0 ? '0' : unrecovered.join(', '), unrecovered.length === 0);
  check('API requests sent / observations published', `${records.filter((r) => r.start <= loadEnd).length} / ${stream.published}`, true);
  check('wall time', `${elapsed.toFixed(0)} s`, true);

  process.stdout.write(`\n## Faults (${API_RATE} API requests/s, ${INGEST_RATE} observations/s)\n\n`);
  process.stdout.write(`${markdownTable(['fault', 'window s', 'requests', 'failed', 'failures by kind', 'recovery s', 'notes'], faultRows)}\n`);
  process.stdout.write(`\n## End state\n\n${markdownTable(['check', 'value', 'ok'], checks.map(([k, v, ok]) => [k, v, ok ? 'yes' : 'NO']))}\n`);
  for (const problem of problems.slice(0, 5)) process.stdout.write(`  problem: ${problem}\n`);
  for (const line of failedLines.filter((l) => l.includes(' outside ')).slice(0, 10)) process.stdout.write(`  failed outside a fault window: ${line}\n`);
  const errorLines = readdirSync(logDir)
    .filter((file) => file !== 'failed-requests.log')
    .flatMap((file) => readFileSync(join(logDir, file), 'utf8').split('\n').filter((l) => l.includes('"level":"error"')).map((l) => `${file}: ${l.slice(0, 300)}`));
  process.stdout.write(`\napp log lines at level error: ${errorLines.length}\n`);
  for (const line of errorLines.slice(0, 10)) process.stdout.write(`  ${line}\n`);
  process.stdout.write(
    `\nRecovery: from the fault (SIGTERM, SIGKILL or server restart) until every app answers /health/ready, every gateway answers\n` +
      `/auctions, /stats and /webhooks, and the first auction published after the fault arrived as auction.created at a receiver.\n` +
      `A request belongs to the window (the fault's first step to its recovery) in which its answer or error came, else to the one\n` +
      `it was in flight during. App logs: ${logDir}\n` +
      `Ledgers: the webhooks belong to an account that makes no counted API request, so its units used must equal its succeeded\n` +
      `deliveries exactly; the API load uses a second account, compared with the metered responses (2xx, 404) the client received.\n` +
      `A gateway killed with SIGKILL, or a ledger statement cut off by a PostgreSQL restart, leaves that unit reserved (by design:\n` +
      `the customer never gains units), so after those faults only used ≤ counted ≤ used + reserved is exact for the API account.\n`,
  );
  return checks.every(([, , ok]) => ok) ? 0 : 1;
}

void main()
  .then(
    (code) => code,
    (error: unknown) => {
      console.error(error);
      return 1;
    },
  )
  .then(async (code) => {
    await cleanUp();
    process.exit(code);
  });
