import 'reflect-metadata';
import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createAccount } from '@cars/accounts';
import { buildEventEnvelope, Observation } from '@cars/contracts';
import { createDataSource, DatabaseModule } from '@cars/persistence';
import { DeliveryModule } from '@cars/service-delivery';
import { migrateAndLoadReference, ObservationProcessor } from '@cars/service-change-detector';
import { generateMasterKey, generateSigningSecret, SecretCipher, webhookHeaders } from '@cars/signing';
import { createDatabase, dropDatabase } from '@cars/testing';
import { Pool } from 'undici';
import { summarize } from '../common/latency';

/**
 * Delivery benchmark:
 *
 *   npm run build && node dist/tools/bench/delivery/main.js [--deliveries 5000] [--seconds 10]
 *
 * 1. Baseline, in the same run: a bare undici keep-alive POST loop of the same signed payload to
 *    the same loopback receiver, with the worker's per-endpoint connection cap (10).
 * 2. Throughput: N events written to the outbox in one transaction, one subscription; the delivery
 *    worker (in this process, the production module) fans them out, signs and sends them.
 *    deliveries/s = N / (last receipt − commit). Goal ≥ 0.8× the baseline.
 * 3. Latency: observations processed one by one by the change-detector's processor (the write
 *    path: row, event in the outbox, NOTIFY at commit) at 80 % of the measured maximum of the whole
 *    path (the lower of the write path's rate and the deliveries/s above); latency = receiver's
 *    first byte − the moment the observation was handed over. Goals p50 ≤ 20 ms, p99 ≤ 100 ms.
 *
 * Database `cars_bench_delivery` (recreated) on TEST_POSTGRES_ADMIN_URL's server; no broker
 * needed (the database drives the worker). Exit code 1 when a goal is missed.
 */

const { values: flags } = parseArgs({
  options: { deliveries: { type: 'string', default: '5000' }, seconds: { type: 'string', default: '10' } },
});
const N = Number(flags.deliveries);
const SECONDS = Number(flags.seconds);
const NAME = 'cars_bench_delivery';
const CONNECTIONS = 10;
const silent = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };

interface Receiver {
  url: string;
  server: Server;
  /** webhook-id → when its request's headers arrived (ms, performance clock). */
  arrivals: Map<string, number>;
  count: number;
  onCount?: () => void;
}

async function startReceiver(): Promise<Receiver> {
  const receiver = { arrivals: new Map<string, number>(), count: 0 } as Receiver;
  receiver.server = createServer((req: IncomingMessage, res) => {
    const at = performance.now();
    const id = String(req.headers['webhook-id'] ?? '');
    req.resume();
    req.on('end', () => {
      if (id && !receiver.arrivals.has(id)) receiver.arrivals.set(id, at);
      receiver.count += 1;
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      receiver.onCount?.();
    });
  });
  receiver.server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hook`;
  return receiver;
}

function until(receiver: Receiver, count: number): Promise<number> {
  return new Promise((resolve) => {
    const check = () => {
      if (receiver.count >= count) {
        receiver.onCount = undefined;
        resolve(performance.now());
      }
    };
    receiver.onCount = check;
    check();
  });
}

async function baseline(receiver: Receiver, body: string, secret: string): Promise<number> {
  const url = new URL(receiver.url);
  const pool = new Pool(url.origin, { connections: CONNECTIONS, keepAliveTimeout: 30_000 });
  const start = receiver.count;
  const started = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < N) {
      next += 1;
      const headers = webhookHeaders({ msgId: `evt_baseline_${next}`, timestamp: new Date(), body, secrets: [secret] });
      const res = await pool.request({ path: url.pathname, method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
      await res.body.text();
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, lane));
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  if (receiver.count - start !== N) throw new Error('baseline lost requests');
  return N / elapsed;
}

function observation(i: number): Observation {
  return {
    source: 'bringatrailer',
    source_auction_id: `bench-${i}`,
    observed_at: new Date().toISOString(),
    auction: {
      url: `https://bringatrailer.com/listing/bench-${i}`,
      title: `1973 Porsche 911 Carrera RS ${i}`,
      status: 'active',
      price: 100000 + i,
      currency: 'USD',
      year: 1973,
      make: 'Porsche',
      model: '911 Carrera RS',
      auction_end_at: '2026-12-01T19:00:00',
      auction_end_date: '2026-12-01',
      bid_count: 1,
      sale_type: 'auction',
      price_type: 'bid',
    },
    bids: [],
  } as unknown as Observation;
}

async function main(): Promise<void> {
  await dropDatabase(NAME).catch(() => undefined);
  const url = await createDatabase(NAME);
  const db = await createDataSource({ url, poolSize: 4 }).initialize();
  await migrateAndLoadReference(db);
  const receiver = await startReceiver();
  const masterKey = generateMasterKey();
  const secret = generateSigningSecret();
  const sealed = SecretCipher.fromEnv(masterKey).encrypt(secret);
  const { account } = await createAccount(db, { email: 'bench@example.test', plan: '100k', emailVerified: true });
  await db.query(
    `INSERT INTO webhook_subscriptions (account_id, url, event_types, secret_ciphertext, secret_key_id)
     VALUES ($1, $2, '{auction.ended,auction.created}', $3, $4)`,
    [account.id, receiver.url, sealed.ciphertext, sealed.keyId],
  );
  const sample = JSON.stringify(buildEventEnvelope('auction.ended', { auction: { id: '1', title: '1973 Porsche 911 Carrera RS' }, changes: {} } as never, new Date()));

  const bare = await baseline(receiver, sample, secret);
  process.stdout.write(`baseline: bare undici keep-alive POST loop (${CONNECTIONS} connections): ${bare.toFixed(0)} requests/s\n`);

  @Module({
    imports: [
      DatabaseModule.forRoot({ url, poolSize: 10 }),
      DeliveryModule.forRoot({ databaseUrl: url, secretKeys: masterKey, allowPrivateDestinations: true }),
    ],
  })
  class WorkerRoot {}
  const worker: INestApplicationContext = await NestFactory.createApplicationContext(WorkerRoot, { logger: silent });
  await worker.init();

  // Throughput: N events committed at once.
  const before = receiver.count;
  const events = Array.from({ length: N }, (_, i) =>
    buildEventEnvelope('auction.ended', { auction: { id: String(i + 1), title: '1973 Porsche 911 Carrera RS' }, changes: {} } as never, new Date()),
  );
  const committed = performance.now();
  await db.query(
    `INSERT INTO events (id, type, api_version, created_at, payload, make, source)
     SELECT x.id, 'auction.ended', '2026-10-17', now(), x.payload::json, 'Porsche', 'bringatrailer' FROM unnest($1::text[], $2::text[]) AS x(id, payload)`,
    [events.map((e) => e.id), events.map((e) => JSON.stringify(e))],
  );
  const done = await until(receiver, before + N);
  const rate = N / ((done - committed) / 1000);
  const ratio = rate / bare;
  process.stdout.write(`delivery worker: ${N} events → ${rate.toFixed(0)} deliveries/s (${ratio.toFixed(2)}× the baseline; goal ≥ 0.80×)\n`);

  // The write path's own maximum (observations processed one per transaction, 64 at a time),
  // with no subscription matching what it emits: the latency run must not queue behind it.
  const processor = new ObservationProcessor(db);
  const warm = Math.min(3000, N);
  const warmStart = performance.now();
  for (let i = 0; i < warm; i += 64) {
    await Promise.all(Array.from({ length: Math.min(64, warm - i) }, (_, j) => processor.process(observation(1_000_000 + i + j))));
  }
  const writeRate = warm / ((performance.now() - warmStart) / 1000);
  process.stdout.write(`write path (change-detector processor, one observation per transaction): ${writeRate.toFixed(0)} observations/s\n`);
  await until(receiver, before + N + warm);

  // Latency at 80 % of the measured maximum of the whole path.
  const target = Math.max(1, Math.floor(Math.min(rate, writeRate) * 0.8));
  const interval = 1000 / target;
  const sent = new Map<string, number>();
  const committedAt = new Map<string, number>();
  const latencies: number[] = [];
  const afterCommit: number[] = [];
  const total = Math.min(Math.floor(target * SECONDS), 20_000);
  const startedAt = performance.now();
  const inFlight = new Set<Promise<unknown>>();
  for (let i = 0; i < total; i += 1) {
    const due = startedAt + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const handedOver = performance.now();
    const p = processor.process(observation(i)).then(() => void committedAt.set(`bench-${i}`, performance.now()));
    sent.set(`bench-${i}`, handedOver);
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    if (inFlight.size > 64) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  await until(receiver, before + N + warm + total);
  const rows: { id: string; sid: string }[] = await db.query(
    `SELECT e.id, a.source_auction_id AS sid FROM events e JOIN auctions a ON a.id = e.auction_id WHERE e.type = 'auction.created'`,
  );
  for (const row of rows) {
    const arrived = receiver.arrivals.get(row.id);
    const handed = sent.get(row.sid);
    if (arrived !== undefined && handed !== undefined) latencies.push(arrived - handed);
    const commit = committedAt.get(row.sid);
    if (arrived !== undefined && commit !== undefined) afterCommit.push(arrived - commit);
  }
  const { p50, p99 } = summarize(latencies);
  const delivery = summarize(afterCommit);
  const achieved = total / ((performance.now() - startedAt) / 1000);
  process.stdout.write(
    `latency, observation handed over → receiver's first byte, at ${target}/s target (${achieved.toFixed(0)}/s achieved, ${latencies.length} samples): ` +
      `p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (goals ≤ 20 ms, ≤ 100 ms)\n` +
      `  of which after the observation's commit (fan-out, claim, sign, send): p50 ${delivery.p50.toFixed(1)} ms, p99 ${delivery.p99.toFixed(1)} ms\n`,
  );

  // Every delivery recorded, each at its first attempt, and nothing sent twice.
  const [check] = await db.query(
    `SELECT count(*) FILTER (WHERE status = 'succeeded' AND attempts = 1)::int AS ok, count(*)::int AS total FROM webhook_deliveries`,
  );
  const sentTotal = receiver.count - before;
  process.stdout.write(`recorded: ${check.ok} of ${check.total} deliveries succeeded at the first attempt; ${sentTotal} requests received\n`);
  await worker.close();
  await db.destroy();
  await new Promise((resolve) => setTimeout(resolve, 200)); // the pools' connections finish closing
  receiver.server.close();
  await dropDatabase(NAME);
  const ok = ratio >= 0.8 && p50 <= 20 && p99 <= 100 && check.ok === check.total && sentTotal === check.total;
  process.exit(ok ? 0 : 1);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
