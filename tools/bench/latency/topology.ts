import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { connect } from 'amqplib';
import { createAccount } from '@cars/accounts';
import { Queues } from '@cars/contracts';
import { assertEventTopology, assertObservationTopology } from '@cars/messaging';
import { createDataSource, pgPoolOf } from '@cars/persistence';
import { migrateAndLoadReference } from '@cars/service-change-detector';
import { generateMasterKey, generateSigningSecret, SecretCipher } from '@cars/signing';
import { createDatabase, createVhost, deleteVhost, dropDatabase } from '@cars/testing';
import { SubscriptionsRepository } from '@cars/webhook-store';
import { DataSource } from 'typeorm';
import { clock, Receiver } from './traffic';
import { Journey } from './stages';

/** Database and vhost of the bench (recreated, dropped at the end). */
export const NAME = 'cars_bench_latency';
/** application_name of the bench's own connections. */
const BENCH_APPLICATION = 'bench-latency';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Topology {
  databaseUrl: string;
  rabbitUrl: string;
  db: DataSource;
  masterKey: string;
  secret: string;
}

/**
 * A database of its own (migrated, reference loaded) and a vhost of its own; one account on the
 * 100K plan with one subscription to `auction.created` at the receiver, made by the webhook store's
 * repository as the webhooks service makes it; and the bench's stamps (below).
 */
export async function setUp(receiver: Receiver): Promise<Topology> {
  const databaseUrl = await createDatabase(NAME);
  const rabbitUrl = createVhost(NAME);
  const db = await createDataSource({ url: databaseUrl, poolSize: 4, applicationName: BENCH_APPLICATION }).initialize();
  await migrateAndLoadReference(db);
  await addStamps(db);
  const masterKey = generateMasterKey();
  const secret = generateSigningSecret();
  const pool = pgPoolOf(db);
  const { account } = await createAccount(pool, { email: 'latency@example.test', plan: '100k', emailVerified: true });
  await new SubscriptionsRepository(pool).insert(
    pool,
    account.id,
    { url: receiver.url, description: 'latency bench', event_types: ['auction.created'], filters: {} },
    SecretCipher.fromEnv(masterKey).encrypt(secret),
  );
  return { databaseUrl, rabbitUrl, db, masterKey, secret };
}

/**
 * Stamps the product's rows do not keep, into unlogged side tables of the bench's database only
 * (nothing of the product reads them; each costs an insert of a few µs per row):
 * - when each delivery was claimed: the claim's lease statement sets `status = 'sending'` and the
 *   recording of the outcome clears the lease again, so a statement trigger (transition tables)
 *   copies the moment the lease statement ended (`clock_timestamp()`; the claim commits next); a
 *   delivery the fan-out inserted already leased counts as claimed when the fan-out commits;
 * - when the transactions that wrote an event row (the change-detector's batch) and a delivery
 *   row (the fan-out pass) began to commit: deferred constraint triggers run at COMMIT, before its
 *   WAL flush (`clock_timestamp()` of the row's trigger; a batch's rows are stamped one after the other).
 */
async function addStamps(db: DataSource): Promise<void> {
  await db.query(`CREATE UNLOGGED TABLE bench_latency_claims (delivery_id uuid NOT NULL, claimed_at timestamptz NOT NULL)`);
  await db.query(`
    CREATE FUNCTION bench_latency_claimed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO bench_latency_claims (delivery_id, claimed_at)
      SELECT n.id, clock_timestamp() FROM leased n JOIN before_lease o ON o.id = n.id
       WHERE o.status = 'pending' AND n.status = 'sending';
      RETURN NULL;
    END $$`);
  await db.query(`
    CREATE TRIGGER bench_latency_claimed AFTER UPDATE ON webhook_deliveries
    REFERENCING OLD TABLE AS before_lease NEW TABLE AS leased
    FOR EACH STATEMENT EXECUTE FUNCTION bench_latency_claimed()`);
  await db.query(`CREATE UNLOGGED TABLE bench_latency_commits (tbl text NOT NULL, id text NOT NULL, committed_at timestamptz NOT NULL)`);
  await db.query(`
    CREATE FUNCTION bench_latency_committed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO bench_latency_commits (tbl, id, committed_at) VALUES (TG_TABLE_NAME, NEW.id::text, clock_timestamp());
      IF TG_TABLE_NAME = 'webhook_deliveries' THEN
        -- (nested: an events row has no status for the condition to read)
        IF NEW.status = 'sending' THEN
          INSERT INTO bench_latency_claims (delivery_id, claimed_at) VALUES (NEW.id, clock_timestamp());
        END IF;
      END IF;
      RETURN NULL;
    END $$`);
  for (const table of ['events', 'webhook_deliveries']) {
    await db.query(`
      CREATE CONSTRAINT TRIGGER bench_latency_committed AFTER INSERT ON ${table}
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION bench_latency_committed()`);
  }
}

/**
 * The database clock against this process's: the offset (database − here, ms) read from the
 * round trip of `clock_timestamp()` with the smallest round trip of `samples` (error ≤ half of it).
 * Same machine, same system clock: expect a few tens of µs, not a correction that matters.
 */
export async function measureClockOffset(db: DataSource, samples = 50): Promise<{ offsetMs: number; roundTripMs: number }> {
  let best = { offsetMs: 0, roundTripMs: Infinity };
  for (let i = 0; i < samples; i += 1) {
    const before = clock();
    const [{ t }] = await db.query(`SELECT extract(epoch FROM clock_timestamp()) * 1000 AS t`);
    const after = clock();
    if (after - before < best.roundTripMs) best = { offsetMs: Number(t) - (before + after) / 2, roundTripMs: after - before };
  }
  return best;
}

export type AppName = 'change-detector' | 'delivery-worker';

/** The production apps as this build compiled them, each its own process, with their production defaults. */
export class Apps {
  private readonly children = new Map<AppName, ChildProcess>();

  constructor(private readonly topology: Topology) {}

  start(): void {
    const { databaseUrl, rabbitUrl, masterKey } = this.topology;
    // BENCH_CHILD_NODE_ARGS: extra node flags for the apps (e.g. --cpu-prof), as the other benches take them.
    const nodeArgs = (process.env.BENCH_CHILD_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const common = { DATABASE_URL: databaseUrl, RABBITMQ_URL: rabbitUrl, HEALTH_PORT: '0', LOG_LEVEL: 'warn' };
    const env: Record<AppName, Record<string, string>> = {
      'change-detector': common,
      'delivery-worker': { ...common, WEBHOOK_SECRET_KEY: masterKey, WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true' },
    };
    // An interrupted bench (Ctrl-C, a timeout's SIGTERM) must not leave the apps running: they
    // would consume the next run's queues and lease its deliveries.
    process.once('exit', () => {
      for (const child of this.children.values()) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(signal === 'SIGINT' ? 130 : 143));
    for (const app of ['change-detector', 'delivery-worker'] as const) {
      const main = join(__dirname, '../../../apps', app, 'src/main.js');
      this.children.set(
        app,
        spawn(process.execPath, [...nodeArgs, main], { env: { ...process.env, ...env[app] }, stdio: ['ignore', 'ignore', 'inherit'] }),
      );
    }
  }

  pids(): Record<AppName, number> {
    return { 'change-detector': this.children.get('change-detector')?.pid ?? 0, 'delivery-worker': this.children.get('delivery-worker')?.pid ?? 0 };
  }

  /** Throws when an app has exited. */
  check(): void {
    for (const [app, child] of this.children) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${app} exited (${child.exitCode ?? child.signalCode})`);
    }
  }

  /**
   * Ready when each listens where its wake-ups come from: the observation consumer and the
   * `delivery.events` intake on the broker, the relay's and the delivery worker's LISTEN
   * connections in the database.
   */
  async ready(timeoutMs = 60_000): Promise<void> {
    const { rabbitUrl, db } = this.topology;
    const connection = await connect(rabbitUrl);
    try {
      const channel = await connection.createChannel();
      await assertObservationTopology(channel);
      await assertEventTopology(channel);
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        this.check();
        const observations = (await channel.checkQueue(Queues.Observations)).consumerCount;
        const events = (await channel.checkQueue(Queues.DeliveryEvents)).consumerCount;
        const [{ listening }] = await db.query(
          `SELECT count(DISTINCT application_name)::int AS listening FROM pg_stat_activity
            WHERE datname = $1 AND application_name IN ('outbox-relay-listen', 'delivery-wakeup')`,
          [NAME],
        );
        if (observations > 0 && events > 0 && listening === 2) return;
        if (Date.now() > deadline) throw new Error('the apps did not become ready');
        await sleep(50);
      }
    } finally {
      await connection.close().catch(() => undefined);
    }
  }

  async stop(): Promise<void> {
    for (const child of this.children.values()) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(15_000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }
}

/**
 * Each delivered observation's journey: the database's stamps (event row, relay, delivery row,
 * claim) converted to this process's clock with `offsetMs`, beside the publish and arrival times.
 */
export async function journeys(
  db: DataSource,
  sent: ReadonlyMap<string, number>,
  receiver: Receiver,
  offsetMs: number,
): Promise<Journey[]> {
  const ids = [...sent.keys()].filter((id) => receiver.arrivals.has(id));
  const rows: { sid: string; eid: string; did: string; applied: number; relayed: number | null; fanned: number }[] = await db.query(
    `SELECT a.source_auction_id AS sid, e.id AS eid, d.id::text AS did,
            extract(epoch FROM e.created_at) * 1000 AS applied,
            extract(epoch FROM e.published_at) * 1000 AS relayed,
            extract(epoch FROM d.created_at) * 1000 AS fanned
       FROM auctions a
       JOIN events e ON e.auction_id = a.id AND e.type = 'auction.created'
       JOIN webhook_deliveries d ON d.event_id = e.id
      WHERE a.source = 'bringatrailer' AND a.source_auction_id = ANY($1::text[])`,
    [ids],
  );
  // The side tables have no index (an insert per row is what they cost the pipeline): read them whole, match here.
  const stamps = async (sql: string) =>
    new Map(((await db.query(sql)) as { id: string; at: number }[]).map((row) => [row.id, Number(row.at)]));
  const commits = await stamps(`SELECT tbl || ':' || id AS id, extract(epoch FROM min(committed_at)) * 1000 AS at FROM bench_latency_commits GROUP BY 1`);
  const claims = await stamps(`SELECT delivery_id::text AS id, extract(epoch FROM min(claimed_at)) * 1000 AS at FROM bench_latency_claims GROUP BY 1`);
  const local = (t: number | string | null | undefined) => (t === null || t === undefined ? null : Number(t) - offsetMs);
  return rows.map((row) => ({
    published: sent.get(row.sid)!,
    applied: local(row.applied)!,
    committed: local(commits.get(`events:${row.eid}`)),
    relayed: local(row.relayed),
    fannedOut: local(row.fanned)!,
    fanOutCommitted: local(commits.get(`webhook_deliveries:${row.did}`)),
    claimed: local(claims.get(row.did)),
    firstByte: receiver.arrivals.get(row.sid)!.at,
  }));
}

/** Deliveries not ended `succeeded` at their first attempt (should be none). */
export async function deliveryCheck(db: DataSource): Promise<{ total: number; firstAttempt: number }> {
  const [row] = await db.query(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE status = 'succeeded' AND attempts = 1)::int AS "firstAttempt" FROM webhook_deliveries`,
  );
  return row;
}

export async function tearDown(topology: Topology | undefined, keep: boolean): Promise<void> {
  await topology?.db.destroy().catch(() => undefined);
  if (keep) return;
  deleteVhost(NAME);
  await dropDatabase(NAME);
}
