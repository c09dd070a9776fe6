import { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { createAccount, getUsage } from '@cars/accounts';
import { buildEventEnvelope, Exchanges } from '@cars/contracts';
import { assertEventTopology } from '@cars/messaging';
import { createDataSource, pgPoolOf, runMigrations } from '@cars/persistence';
import { generateMasterKey, generateSigningSecret, SecretCipher } from '@cars/signing';
import { connect } from 'amqplib';
import { Pool } from 'pg';
import { createDatabase, createVhost, log, restartPostgres, restartRabbitMq, sleep } from '../common/infra';
import { spawnApp } from '../common/processes';
import { Arrival, ReceiverRoute, startReceivers } from '../common/receivers';

/** The delivery drill's steps, in the order main.ts runs them. */

/** Receivers: `/steady` always 200, `/flaky` 500 on 20 % of requests, `/slow` 200 after 150 ms. */
const BEHAVIOUR: Record<string, Omit<ReceiverRoute, 'secret'>> = { '/steady': {}, '/flaky': { failRate: 0.2 }, '/slow': { delayMs: 150 } };

/** What the drill runs in and on: its database (migrated) and vhost, the subscriber, the receivers. */
export interface Drill {
  name: string;
  databaseUrl: string;
  rabbitUrl: string;
  masterKey: string;
  accountId: string;
  subscriptions: { id: string; path: string }[];
  arrivals: Arrival[];
  problems: string[];
  closeReceivers: () => Promise<void>;
}

/** A database and a vhost of its own, one account on the 100K plan, and one subscription per receiver. */
export async function prepareDrill(): Promise<Drill> {
  const name = `cars_chaos_${Date.now().toString(36)}`;
  const databaseUrl = await createDatabase(name);
  const rabbitUrl = createVhost(name);
  const setup = await createDataSource({ url: databaseUrl, poolSize: 2 }).initialize();
  await runMigrations(setup);

  const masterKey = generateMasterKey();
  const cipher = SecretCipher.fromEnv(masterKey);
  const { account } = await createAccount(pgPoolOf(setup), { email: `chaos-${randomUUID()}@example.test`, plan: '100k', emailVerified: true });
  const routes = new Map<string, ReceiverRoute>();
  const arrivals: Arrival[] = [];
  const problems: string[] = [];
  const receivers = await startReceivers(routes, arrivals, problems);
  const port = receivers.port;
  const subscriptions: { id: string; path: string }[] = [];
  for (const path of Object.keys(BEHAVIOUR)) {
    const secret = generateSigningSecret();
    routes.set(path, { secret, ...BEHAVIOUR[path] });
    const sealed = cipher.encrypt(secret);
    const [row] = await setup.query(
      `INSERT INTO webhook_subscriptions (account_id, url, event_types, secret_ciphertext, secret_key_id, active_since)
       VALUES ($1, $2, '{auction.ended}', $3, $4, now() - interval '1 minute') RETURNING id`,
      [account.id, `http://127.0.0.1:${port}${path}`, sealed.ciphertext, sealed.keyId],
    );
    subscriptions.push({ id: row.id, path });
  }
  await setup.destroy();
  return { name, databaseUrl, rabbitUrl, masterKey, accountId: account.id, subscriptions, arrivals, problems, closeReceivers: receivers.close };
}

/** The delivery worker replicas; like a Deployment, one that exits by itself is counted and started again. */
export class Workers {
  private readonly workers: (ChildProcess | null)[];
  private finishing = false;
  crashes = 0;

  constructor(
    private readonly drill: Drill,
    private readonly logDir: string,
    private readonly count: number,
  ) {
    this.workers = Array.from({ length: count }, () => null);
  }

  startAll(): void {
    for (let i = 0; i < this.count; i += 1) this.start(i);
  }

  private start(i: number): void {
    const child = spawnApp('delivery-worker', {
      DATABASE_URL: this.drill.databaseUrl,
      RABBITMQ_URL: this.drill.rabbitUrl,
      WEBHOOK_SECRET_KEY: this.drill.masterKey,
      WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true',
      DELIVERY_RETRY_DELAYS_MS: '200,400,800,1600,3200',
      // The endpoint circuit scaled like the schedule (30 s doubling to 10 min).
      DELIVERY_CIRCUIT_BACKOFF_MS: '100',
      DELIVERY_CIRCUIT_MAX_BACKOFF_MS: '2000',
      DELIVERY_SWEEP_INTERVAL_MS: '200',
      DELIVERY_RECEIVER_TIMEOUT_MS: '2000',
      DELIVERY_LEASE_MS: '4000',
      LOG_LEVEL: 'warn',
      HEALTH_PORT: '0',
      DATABASE_POOL_SIZE: '8',
    }, join(this.logDir, `worker-${i + 1}.log`));
    this.workers[i] = child;
    child.once('exit', (code, signal) => {
      if (this.finishing || signal === 'SIGKILL' || this.workers[i] !== child) return;
      this.crashes += 1;
      log(`worker #${i + 1} exited by itself (${signal ?? `code ${code}`}); starting it again`);
      this.start(i);
    });
  }

  /** SIGKILL worker `n` (modulo the replicas), and its replacement 1.5 s later. */
  async kill(n: number, faults: string[]): Promise<void> {
    const i = n % this.count;
    const victim = this.workers[i];
    this.workers[i] = null;
    victim?.kill('SIGKILL');
    faults.push(`SIGKILL delivery-worker #${i + 1}`);
    log(`killed worker #${i + 1} (SIGKILL)`);
    await sleep(1500);
    this.start(i);
  }

  stopAll(): void {
    this.finishing = true;
    for (const worker of this.workers) worker?.kill('SIGTERM');
  }
}

/** A confirm channel on the event exchange; `lost` runs when the broker goes away. */
async function openChannel(url: string, lost: () => void) {
  const connection = await connect(url);
  connection.on('error', () => undefined);
  connection.on('close', lost);
  const channel = await connection.createConfirmChannel();
  channel.on('error', () => undefined);
  channel.on('close', lost);
  await assertEventTopology(channel);
  return channel;
}

/**
 * The producer: `events` events into the outbox in batches, as the change-detector writes them,
 * each batch followed by a wake-up on `auction.events` as the relay publishes it; their ids.
 */
export async function produce(pool: Pool, rabbitUrl: string, events: number, produced: string[]): Promise<void> {
  let channel: Awaited<ReturnType<typeof openChannel>> | null = null;
  while (produced.length < events) {
    const batch = Array.from({ length: Math.min(100, events - produced.length) }, (_, i) =>
      buildEventEnvelope('auction.ended', { auction: { id: String(produced.length + i + 1) }, changes: {} } as never, new Date()),
    );
    try {
      await pool.query(
        `INSERT INTO events (id, type, api_version, created_at, payload, auction_id, make, source)
         SELECT x.id, 'auction.ended', '2026-10-17', now(), x.payload::json, NULL, 'Porsche', 'bringatrailer'
           FROM unnest($1::text[], $2::text[]) AS x(id, payload)`,
        [batch.map((e) => e.id), batch.map((e) => JSON.stringify(e))],
      );
      produced.push(...batch.map((e) => e.id));
    } catch {
      await sleep(200); // PostgreSQL is restarting: try the batch again
      continue;
    }
    try {
      channel ??= await openChannel(rabbitUrl, () => (channel = null));
      channel.publish(Exchanges.AuctionEvents, 'auction.ended', Buffer.from('{}'), { persistent: true });
    } catch {
      channel = null; // RabbitMQ is restarting: the database and the sweep carry on
    }
    await sleep(20);
  }
}

/** Three kills of a worker, with a RabbitMQ and a PostgreSQL restart between them unless `skipRestarts`; what was done. */
export async function runFaults(workers: Workers, skipRestarts: boolean, faults: string[]): Promise<void> {
  await sleep(2000);
  await workers.kill(0, faults);
  if (!skipRestarts) {
    await sleep(2000);
    log('restarting RabbitMQ');
    await restartRabbitMq();
    faults.push('RabbitMQ restarted (stop_app/start_app)');
  }
  await sleep(2000);
  await workers.kill(1, faults);
  if (!skipRestarts) {
    await sleep(2000);
    log('restarting PostgreSQL');
    await restartPostgres();
    faults.push('PostgreSQL restarted (pg_ctlcluster restart -m fast)');
  }
  await sleep(2000);
  await workers.kill(2, faults);
}

export interface DeliverySummary {
  pending: number;
  succeeded: number;
  failed: number;
  total: number;
}

/** Until every event is fanned out and every delivery done, or no request arrived for a minute; the last counts. */
export async function waitForDeliveries(pool: Pool, arrivals: Arrival[], pairs: number): Promise<DeliverySummary | null> {
  let summary: DeliverySummary | null = null;
  let lastArrivals = -1;
  let stalledSince = Date.now();
  while (Date.now() - stalledSince < 60_000) {
    if (arrivals.length !== lastArrivals) {
      lastArrivals = arrivals.length;
      stalledSince = Date.now();
    }
    try {
      const { rows } = await pool.query(
        `SELECT count(*) FILTER (WHERE status IN ('pending', 'sending'))::int AS pending,
                count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded,
                count(*) FILTER (WHERE status = 'failed')::int AS failed, count(*)::int AS total,
                (SELECT count(*)::int FROM events WHERE fanned_out_at IS NULL) AS unfanned
           FROM webhook_deliveries`,
      );
      summary = rows[0];
      if (rows[0].unfanned === 0 && rows[0].pending === 0 && rows[0].total === pairs) break;
    } catch {
      // PostgreSQL still coming back
    }
    await sleep(500);
  }
  return summary;
}

/** The end state: every pair received, every request verified, the ledger exact. */
export async function checkEndState(
  pool: Pool,
  drill: Drill,
  run: { events: number; produced: string[]; summary: DeliverySummary | null; crashes: number; elapsed: number },
): Promise<[string, string, boolean][]> {
  const { arrivals, problems, subscriptions } = drill;
  const { produced, summary, crashes, elapsed } = run;
  const usage = await getUsage(pool, drill.accountId);
  const received = new Map<string, number>();
  for (const a of arrivals) received.set(`${a.path}|${a.eventId}`, (received.get(`${a.path}|${a.eventId}`) ?? 0) + 1);
  let missing = 0;
  let duplicates = 0;
  for (const eventId of produced) {
    for (const s of subscriptions) {
      const n = received.get(`${s.path}|${eventId}`) ?? 0;
      if (n === 0) missing += 1;
    }
  }
  const successes = new Map<string, number>();
  for (const a of arrivals) if (a.ok) successes.set(`${a.path}|${a.eventId}`, (successes.get(`${a.path}|${a.eventId}`) ?? 0) + 1);
  for (const n of successes.values()) if (n > 1) duplicates += n - 1;

  const pairs = produced.length * subscriptions.length;
  return [
    ['events produced', String(produced.length), produced.length === run.events],
    ['(event, subscription) pairs', String(pairs), true],
    ['deliveries recorded', String(summary?.total ?? '?'), summary?.total === pairs],
    ['pairs received ≥ 1 time', `${pairs - missing} / ${pairs}`, missing === 0],
    ['deliveries succeeded / failed', `${summary?.succeeded ?? '?'} / ${summary?.failed ?? '?'}`, summary?.pending === 0],
    ['requests received (all attempts)', String(arrivals.length), true],
    ['duplicate successful receipts (same webhook-id)', String(duplicates), true],
    ['requests failing verification or id check', String(problems.length), problems.length === 0],
    ['units charged / succeeded deliveries', `${usage.used} / ${summary?.succeeded ?? '?'}`, usage.used === summary?.succeeded],
    ['units still reserved', String(usage.reserved), usage.reserved === 0],
    ['workers that exited by themselves', String(crashes), crashes === 0],
    ['wall time', `${elapsed.toFixed(1)} s`, true],
  ];
}
