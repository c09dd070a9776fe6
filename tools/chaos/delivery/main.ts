/**
 * Delivery under faults (`npm run chaos:delivery`): N events (default 10,000) to three loopback
 * receivers — one healthy, one failing 20 % of requests with 500, one answering slowly — while the
 * delivery worker is killed with SIGKILL three times, RabbitMQ is restarted once and PostgreSQL
 * is restarted once. Then every (event, subscription) pair must have been received at least once,
 * every request must verify with its endpoint's secret and carry its event id as `webhook-id`
 * (duplicates are the same event), and the ledger must have charged exactly one unit per
 * successfully delivered pair. The retry schedule is scaled down so the run ends in minutes.
 *
 * It restarts this machine's PostgreSQL and RabbitMQ: run it on its own, never beside `npm test`.
 * Flags: --events N  --workers N (replicas, default 2)  --skip-restarts (kills only).
 */
import { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createAccount, getUsage } from '@cars/accounts';
import { buildEventEnvelope, Exchanges } from '@cars/contracts';
import { createDataSource, pgPoolOf, runMigrations } from '@cars/persistence';
import { generateMasterKey, generateSigningSecret, SecretCipher } from '@cars/signing';
import { connect } from 'amqplib';
import { assertEventTopology } from '@cars/messaging';
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
  sleep,
} from '../common/infra';
import { spawnApp } from '../common/processes';
import { Arrival, ReceiverRoute, startReceivers } from '../common/receivers';

const { values: flags } = parseArgs({
  strict: true,
  options: {
    events: { type: 'string', default: '10000' },
    workers: { type: 'string', default: '2' },
    'skip-restarts': { type: 'boolean', default: false },
  },
});
const EVENTS = Number(flags.events);
const WORKERS = Number(flags.workers);

/** Receivers: `/steady` always 200, `/flaky` 500 on 20 % of requests, `/slow` 200 after 150 ms. */
const BEHAVIOUR: Record<string, Omit<ReceiverRoute, 'secret'>> = { '/steady': {}, '/flaky': { failRate: 0.2 }, '/slow': { delayMs: 150 } };

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

async function main(): Promise<void> {
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

  const logDir = mkdtempSync(join(tmpdir(), 'cars-chaos-delivery-'));
  const workers: (ChildProcess | null)[] = Array.from({ length: WORKERS }, () => null);
  let finishing = false;
  let crashes = 0;
  const startWorker = (i: number) => {
    const child = spawnApp('delivery-worker', {
      DATABASE_URL: databaseUrl,
      RABBITMQ_URL: rabbitUrl,
      WEBHOOK_SECRET_KEY: masterKey,
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
    }, join(logDir, `worker-${i + 1}.log`));
    workers[i] = child;
    // Like a Deployment: a worker that exits by itself is counted and started again.
    child.once('exit', (code, signal) => {
      if (finishing || signal === 'SIGKILL' || workers[i] !== child) return;
      crashes += 1;
      log(`worker #${i + 1} exited by itself (${signal ?? `code ${code}`}); starting it again`);
      startWorker(i);
    });
  };
  for (let i = 0; i < WORKERS; i += 1) startWorker(i);

  // The producer: events into the outbox in batches, as the change-detector writes them, each
  // batch followed by a wake-up on `auction.events` as the relay publishes it.
  const pool = new Pool({ connectionString: databaseUrl, max: 2 });
  pool.on('error', () => undefined);
  const produced: string[] = [];
  const produce = async () => {
    let channel: Awaited<ReturnType<typeof openChannel>> | null = null;
    while (produced.length < EVENTS) {
      const batch = Array.from({ length: Math.min(100, EVENTS - produced.length) }, (_, i) =>
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
  };

  const faults: string[] = [];
  const chaos = async () => {
    const kill = async (n: number) => {
      const i = n % WORKERS;
      const victim = workers[i];
      workers[i] = null;
      victim?.kill('SIGKILL');
      faults.push(`SIGKILL delivery-worker #${i + 1}`);
      log(`killed worker #${i + 1} (SIGKILL)`);
      await sleep(1500);
      startWorker(i);
    };
    await sleep(2000);
    await kill(0);
    if (!flags['skip-restarts']) {
      await sleep(2000);
      log('restarting RabbitMQ');
      await restartRabbitMq();
      faults.push('RabbitMQ restarted (stop_app/start_app)');
    }
    await sleep(2000);
    await kill(1);
    if (!flags['skip-restarts']) {
      await sleep(2000);
      log('restarting PostgreSQL');
      await restartPostgres();
      faults.push('PostgreSQL restarted (pg_ctlcluster restart -m fast)');
    }
    await sleep(2000);
    await kill(2);
  };

  const started = Date.now();
  await Promise.all([produce(), chaos()]);
  log(`${produced.length} events produced; waiting for every delivery to finish`);

  let summary: { pending: number; succeeded: number; failed: number; total: number } | null = null;
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
      if (rows[0].unfanned === 0 && rows[0].pending === 0 && rows[0].total === produced.length * subscriptions.length) break;
    } catch {
      // PostgreSQL still coming back
    }
    await sleep(500);
  }
  const elapsed = (Date.now() - started) / 1000;
  finishing = true;
  for (const worker of workers) worker?.kill('SIGTERM');

  const usage = await getUsage(pool, account.id);
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
  const rows: [string, string, boolean][] = [
    ['events produced', String(produced.length), produced.length === EVENTS],
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
  process.stdout.write(`\nfaults: ${faults.join('; ')}\n\n`);
  process.stdout.write(`${markdownTable(['check', 'value', 'ok'], rows.map(([k, v, ok]) => [k, v, ok ? 'yes' : 'NO']))}\n`);
  for (const problem of problems.slice(0, 5)) process.stdout.write(`  problem: ${problem}\n`);
  process.stdout.write(`worker logs: ${logDir}\n`);
  // Failed deliveries used their six attempts (the flaky receiver fails 20 % of requests; a kill
  // interrupts the attempts its worker held): what their last attempt was.
  const { rows: failed } = await pool.query<{ url: string; attempts: number; last_error: string | null; last_response_status: number | null }>(
    `SELECT s.url, d.attempts, d.last_error, d.last_response_status
       FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
      WHERE d.status = 'failed' LIMIT 10`,
  );
  for (const f of failed) {
    process.stdout.write(`  failed: ${new URL(f.url).pathname} after ${f.attempts} attempts, last ${f.last_response_status ?? f.last_error ?? '?'}\n`);
  }

  await pool.end();
  await receivers.close();
  await dropDatabase(name);
  deleteVhost(name);
  process.exit(rows.every(([, , ok]) => ok) ? 0 : 1);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
