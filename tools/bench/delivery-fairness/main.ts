import 'reflect-metadata';
import { createServer as createNetServer, AddressInfo, Server as NetServer, Socket } from 'node:net';
import { createAccount } from '@cars/accounts';
import { buildEventEnvelope } from '@cars/contracts';
import { createDataSource, pgPoolOf } from '@cars/persistence';
import { migrateAndLoadReference, ObservationProcessor } from '@cars/service-change-detector';
import { generateMasterKey, generateSigningSecret, SecretCipher } from '@cars/signing';
import { createDatabase, dropDatabase } from '@cars/testing';
import { DataSource } from 'typeorm';
import { commandLine, integerFlag, parseFlags } from '../common/args';
import { ConsumerLikeBatches, insertEvents, observation, Receiver, startDeliveryWorker, startReceiver } from '../common/delivery-path';
import { percentile } from '../common/latency';

/**
 * Delivery noisy-neighbour benchmark:
 *
 *   npm run build && node dist/tools/bench/delivery-fairness/main.js [--hanging 4] [--refusing 12]
 *     [--events 3000] [--observations 300] [--rate 30]
 *
 * One account subscribes `hanging` endpoints that accept the connection and never answer (each
 * attempt runs into the production 10 s receiver timeout) and `refusing` endpoints on closed ports
 * to `auction.created`; `events` events are published for them first (hanging + refusing
 * deliveries each, as for endpoints down for a while). Then a third account's healthy endpoint
 * subscribes, and `observations` new auctions go through the change-detector's processor at
 * `rate`/s (consumer-like batches); every `auction.created` goes to the healthy endpoint and to
 * the failing ones. The delivery worker is the production module in this process, with its
 * production settings, driven by the database.
 *
 * Prints the healthy endpoint's latency (observation handed over → receiver's first byte) p50,
 * p90, p99 and max, how many it did not receive within 30 s of the last hand-over, and the failing
 * endpoints' attempts and circuit states. Exit code 1 when p99 > 100 ms or one is missing.
 * Database `cars_bench_delivery_fairness` (recreated) on TEST_POSTGRES_ADMIN_URL's server.
 */

const USAGE = `Usage: node dist/tools/bench/delivery-fairness/main.js [options]

  --hanging N        endpoints that accept and never answer (default 4)
  --refusing N       endpoints on a closed port (default 12)
  --events N         events published for the failing endpoints first (default 3000)
  --observations N   observations for the healthy endpoint (default 300)
  --rate R           observations per second (default 30)
  -h, --help         this text`;

const options = commandLine('bench:delivery-fairness', USAGE, (argv) => {
  const flags = parseFlags(argv, {
    hanging: { type: 'string' },
    refusing: { type: 'string' },
    events: { type: 'string' },
    observations: { type: 'string' },
    rate: { type: 'string' },
  });
  if (flags === 'help') return 'help';
  return {
    hanging: integerFlag(flags, 'hanging', 4, 0),
    refusing: integerFlag(flags, 'refusing', 12, 0),
    events: integerFlag(flags, 'events', 3000, 0),
    observations: integerFlag(flags, 'observations', 300, 1),
    rate: integerFlag(flags, 'rate', 30, 1),
  };
});
const NAME = 'cars_bench_delivery_fairness';
const DEADLINE_MS = 30_000;

/** Accepts connections and never answers; counts them. */
async function startHanging(): Promise<{ url: string; server: NetServer; sockets: Set<Socket>; connections: number }> {
  const sockets = new Set<Socket>();
  const state = { url: '', server: undefined as unknown as NetServer, sockets, connections: 0 };
  state.server = createNetServer((socket) => {
    state.connections += 1;
    sockets.add(socket);
    socket.resume();
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => state.server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}/hook`;
  return state;
}

/** A loopback port nothing listens on (bound, then closed). */
async function closedPortUrl(): Promise<string> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/hook`;
}

async function subscribe(db: DataSource, accountId: string, url: string, sealed: { ciphertext: string; keyId: string }): Promise<string> {
  const [row] = await db.query(
    `INSERT INTO webhook_subscriptions (account_id, url, event_types, secret_ciphertext, secret_key_id)
     VALUES ($1, $2, '{auction.created}', $3, $4) RETURNING id`,
    [accountId, url, sealed.ciphertext, sealed.keyId],
  );
  return row.id as string;
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return check();
}

type Hanging = Awaited<ReturnType<typeof startHanging>>;
type Sealed = { ciphertext: string; keyId: string };

/** A database of its own, migrated, reference loaded. */
async function setUp(): Promise<{ url: string; db: DataSource }> {
  await dropDatabase(NAME).catch(() => undefined);
  const url = await createDatabase(NAME);
  const db = await createDataSource({ url, poolSize: 4 }).initialize();
  await migrateAndLoadReference(db);
  return { url, db };
}

/** The noisy account: hanging and refusing endpoints, and a backlog of events for them. */
async function noisyBacklog(db: DataSource, sealed: Sealed): Promise<{ hanging: Hanging[]; failing: { id: string; kind: 'hanging' | 'refusing' }[] }> {
  const { account: noisy } = await createAccount(pgPoolOf(db), { email: 'noisy@example.test', plan: '100k', emailVerified: true });
  const hanging = await Promise.all(Array.from({ length: options.hanging }, startHanging));
  const failing: { id: string; kind: 'hanging' | 'refusing' }[] = [];
  for (const server of hanging) failing.push({ id: await subscribe(db, noisy.id, server.url, sealed), kind: 'hanging' });
  for (let i = 0; i < options.refusing; i += 1) failing.push({ id: await subscribe(db, noisy.id, await closedPortUrl(), sealed), kind: 'refusing' });
  const backlog = Array.from({ length: options.events }, (_, i) =>
    buildEventEnvelope('auction.created', { auction: { id: String(i + 1), title: '1973 Porsche 911 Carrera RS' } } as never, new Date()),
  );
  await insertEvents(db, backlog);
  return { hanging, failing };
}

/** Until the backlog is fanned out to every failing endpoint. */
async function waitForFanOut(db: DataSource, failing: unknown[]): Promise<void> {
  const fannedOut = options.events * failing.length;
  const startedAt = performance.now();
  await waitFor(async () => (await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries`))[0].n >= fannedOut, 120_000);
  process.stdout.write(
    `backlog: ${options.events} events fanned out to ${failing.length} failing endpoints (${options.hanging} hanging, ` +
      `${options.refusing} refusing) = ${fannedOut} deliveries in ${((performance.now() - startedAt) / 1000).toFixed(1)} s\n`,
  );
}

/**
 * Observations at the rate for the healthy endpoint (of a third account, subscribed now: it
 * receives only what follows); each delivery's latency from the hand-over and from the commit.
 */
async function healthyLatency(db: DataSource, receiver: Receiver): Promise<{ p99: number; missing: number }> {
  const processor = new ObservationProcessor(db);
  const committedAt = new Map<string, number>();
  const batcher = new ConsumerLikeBatches(processor, (o) => committedAt.set(o.source_auction_id, performance.now()));
  const sent = new Map<string, number>();
  const interval = 1000 / options.rate;
  const phaseStart = performance.now();
  for (let i = 0; i < options.observations; i += 1) {
    const wait = phaseStart + i * interval - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    sent.set(`bench-${i}`, performance.now());
    batcher.submit(observation(i));
  }
  const achieved = options.observations / ((performance.now() - phaseStart) / 1000);
  await batcher.idle();
  const lastHandOver = performance.now();
  await waitFor(async () => receiver.arrivals.size >= options.observations, DEADLINE_MS - (performance.now() - lastHandOver));

  const rows: { id: string; sid: string }[] = await db.query(
    `SELECT e.id, a.source_auction_id AS sid FROM events e JOIN auctions a ON a.id = e.auction_id WHERE e.type = 'auction.created'`,
  );
  const latencies: number[] = [];
  const afterCommit: number[] = [];
  for (const row of rows) {
    const arrived = receiver.arrivals.get(row.id);
    const handed = sent.get(row.sid);
    const commit = committedAt.get(row.sid);
    if (arrived !== undefined && handed !== undefined) latencies.push(arrived - handed);
    if (arrived !== undefined && commit !== undefined) afterCommit.push(arrived - commit);
  }
  latencies.sort((a, b) => a - b);
  afterCommit.sort((a, b) => a - b);
  const missing = options.observations - latencies.length;
  const [p50, p90, p99, max] = [50, 90, 99, 100].map((p) => percentile(latencies, p));
  process.stdout.write(
    `healthy endpoint, ${options.observations} observations at ${options.rate}/s (${achieved.toFixed(1)}/s achieved), ` +
      `observation handed over → receiver's first byte: p50 ${p50.toFixed(1)} ms, p90 ${p90.toFixed(1)} ms, ` +
      `p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms (goal p99 ≤ 100 ms); ` +
      `not received within ${DEADLINE_MS / 1000} s: ${missing}\n` +
      `  of which after the observation's commit (fan-out, claim, sign, send): p50 ${percentile(afterCommit, 50).toFixed(1)} ms, ` +
      `p99 ${percentile(afterCommit, 99).toFixed(1)} ms\n`,
  );
  return { p99, missing };
}

/** What the failing endpoints cost: attempts made, and their circuits where the schema has them. */
async function failingCost(db: DataSource, failing: { id: string; kind: 'hanging' | 'refusing' }[], hanging: Hanging[]): Promise<void> {
  const [{ exists: circuits }] = await db.query(
    `SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_name = 'webhook_subscriptions' AND column_name = 'circuit_state') AS exists`,
  );
  const perEndpoint: { id: string; attempts: number; attempted: number; pending: number; circuit: string | null }[] = await db.query(
    `SELECT s.id, coalesce(sum(d.attempts), 0)::int AS attempts, count(d.id) FILTER (WHERE d.attempts > 0)::int AS attempted,
            count(d.id) FILTER (WHERE d.status IN ('pending', 'sending'))::int AS pending,
            ${circuits ? 's.circuit_state' : 'NULL'} AS circuit
       FROM webhook_subscriptions s LEFT JOIN webhook_deliveries d ON d.subscription_id = s.id
      WHERE s.id = ANY($1::uuid[]) GROUP BY s.id`,
    [failing.map((f) => f.id)],
  );
  for (const kind of ['hanging', 'refusing'] as const) {
    const ids = new Set(failing.filter((f) => f.kind === kind).map((f) => f.id));
    const mine = perEndpoint.filter((row) => ids.has(row.id));
    if (mine.length === 0) continue;
    const states = new Map<string, number>();
    for (const row of mine) states.set(row.circuit ?? 'n/a', (states.get(row.circuit ?? 'n/a') ?? 0) + 1);
    process.stdout.write(
      `${kind} endpoints (${mine.length}): ${mine.reduce((a, r) => a + r.attempts, 0)} attempts ` +
        `(per endpoint ${Math.min(...mine.map((r) => r.attempts))}–${Math.max(...mine.map((r) => r.attempts))}), ` +
        `${mine.reduce((a, r) => a + r.pending, 0)} deliveries still pending; circuits: ` +
        `${[...states].map(([state, n]) => `${n} ${state}`).join(', ')}\n`,
    );
  }
  if (hanging.length > 0) process.stdout.write(`connections the hanging endpoints accepted: ${hanging.reduce((a, h) => a + h.connections, 0)}\n`);
}

async function main(): Promise<void> {
  const { url, db } = await setUp();
  const masterKey = generateMasterKey();
  const sealed = SecretCipher.fromEnv(masterKey).encrypt(generateSigningSecret());
  const { hanging, failing } = await noisyBacklog(db, sealed);
  const worker = await startDeliveryWorker(url, masterKey);
  await waitForFanOut(db, failing);

  const receiver = await startReceiver();
  const { account: healthy } = await createAccount(pgPoolOf(db), { email: 'healthy@example.test', plan: '100k', emailVerified: true });
  const healthyId = await subscribe(db, healthy.id, receiver.url, sealed);
  const { p99, missing } = await healthyLatency(db, receiver);
  await failingCost(db, failing, hanging);
  const [healthyState] = await db.query(
    `SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS ok, count(*)::int AS total FROM webhook_deliveries WHERE subscription_id = $1`,
    [healthyId],
  );
  process.stdout.write(`healthy endpoint's deliveries: ${healthyState.ok} of ${healthyState.total} succeeded\n`);

  for (const server of hanging) for (const socket of server.sockets) socket.destroy();
  await worker.close();
  await db.destroy();
  await new Promise((resolve) => setTimeout(resolve, 200)); // the pools' connections finish closing
  receiver.server.close();
  for (const server of hanging) server.server.close();
  await dropDatabase(NAME);
  process.exit(p99 <= 100 && missing === 0 ? 0 : 1);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
