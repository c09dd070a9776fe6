import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildEventEnvelope, Queues } from '@cars/contracts';
import { createDataSource } from '@cars/persistence';
import { generateSigningSecret, SecretCipher } from '@cars/signing';
import { createDatabase, createVhost, deleteVhost, dropDatabase } from '@cars/testing';
import { connect } from 'amqplib';
import { DataSource } from 'typeorm';
import { createTestAccount, settledUsage } from './support/accounts';
import { AppProcess, freePort, startApp, waitForOk } from './support/processes';
import { Receiver, startReceiver } from './support/receiver';

const run = promisify(execFile);
const DIST = join(__dirname, '../../dist/tools');

/**
 * Rolling restarts lose nothing: each app gets SIGTERM while it is busy and must exit 0 on its
 * own, with its work finished or handed back — an observation committed or requeued, a delivery in
 * flight recorded (never left `sending`), an RPC in flight answered, an HTTP request in flight
 * answered — and once a replacement runs, everything is done exactly as often as it should be.
 */
describe('SIGTERM under load', () => {
  const name = `${process.env.TEST_RUN_ID}_graceful`.toLowerCase();
  const running: AppProcess[] = [];
  let env: Record<string, string>;
  let db: DataSource;
  let dir: string;

  const start = async (app: string, extra: Record<string, string> = {}): Promise<{ app: AppProcess; port: number }> => {
    const port = await freePort();
    // The gateway as deployed: its API on PORT, /health/* and /metrics on HEALTH_PORT too.
    const portVariable: Record<string, string> =
      app === 'gateway' ? { PORT: String(port), HOST: '127.0.0.1', HEALTH_PORT: String(await freePort()) } : { HEALTH_PORT: String(port) };
    const process = startApp(app, { ...env, ...portVariable, LOG_LEVEL: 'warn', ...extra });
    running.push(process);
    await waitForOk(`http://127.0.0.1:${port}/health/ready`, 30_000).catch((error: unknown) => {
      throw new Error(`${app}: ${String(error)}\n${process.output()}`);
    });
    return { app: process, port };
  };

  /** SIGTERM, then the exit: code 0 and no signal, and how long it took. */
  const terminate = async (app: AppProcess): Promise<{ code: number | null; signal: string | null; ms: number }> => {
    const started = Date.now();
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      app.child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    app.child.kill('SIGTERM');
    return { ...(await exited), ms: Date.now() - started };
  };

  const waitFor = async (what: string, check: () => Promise<boolean>, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${running.map((a) => a.output()).join('\n').slice(-4000)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  const count = async (sql: string, parameters: unknown[] = []): Promise<number> => Number((await db.query(sql, parameters))[0].n);

  /** Messages waiting in a queue of this spec's vhost. */
  const queued = async (queue: string): Promise<number> => {
    const connection = await connect(env.RABBITMQ_URL);
    try {
      return (await (await connection.createChannel()).checkQueue(queue)).messageCount;
    } finally {
      await connection.close();
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'graceful-'));
    env = { DATABASE_URL: await createDatabase(name), RABBITMQ_URL: createVhost(name), DATABASE_POOL_SIZE: '3', WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true' };
    await run(process.execPath, [join(DIST, 'admin', 'src', 'main.js'), 'db:migrate'], { env: { ...process.env, ...env } });
    db = await createDataSource({ url: env.DATABASE_URL, poolSize: 2 }).initialize();
  }, 60_000);

  afterAll(async () => {
    await Promise.all(running.map((app) => app.stop('SIGKILL')));
    await db?.destroy();
    deleteVhost(name);
    await dropDatabase(name);
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivery worker: the attempts in flight are recorded, the claimed rest handed back, each pair charged once', async () => {
    const receiver: Receiver = await startReceiver();
    receiver.answer = () => ({ status: 200, body: 'ok', delayMs: 400 });
    try {
      const account = await createTestAccount(db, { plan: '10k' });
      const sealed = SecretCipher.fromEnv(process.env.WEBHOOK_SECRET_KEY).encrypt(generateSigningSecret());
      await db.query(
        `INSERT INTO webhook_subscriptions (account_id, url, event_types, secret_ciphertext, secret_key_id, active_since)
         VALUES ($1, $2, '{auction.ended}', $3, $4, now() - interval '1 minute')`,
        [account.accountId, receiver.url('/slow'), sealed.ciphertext, sealed.keyId],
      );
      const events = Array.from({ length: 40 }, (_, i) => buildEventEnvelope('auction.ended', { auction: { id: String(i + 1) }, changes: {} } as never, new Date()));
      const { app: worker } = await start('delivery-worker');
      await db.query(
        `INSERT INTO events (id, type, api_version, created_at, payload, make, source)
         SELECT x.id, 'auction.ended', '2026-10-17', now(), x.payload::json, 'Porsche', 'bringatrailer' FROM unnest($1::text[], $2::text[]) AS x(id, payload)`,
        [events.map((e) => e.id), events.map((e) => JSON.stringify(e))],
      );
      // Ten attempts in flight (the per-endpoint cap), thirty claimed or due behind them.
      await waitFor('attempts in flight', async () => receiver.received.length >= 5);
      const stop = await terminate(worker);
      expect({ code: stop.code, signal: stop.signal }).toEqual({ code: 0, signal: null });
      expect(stop.ms).toBeLessThan(10_000);
      expect(await count(`SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'sending'`)).toBe(0);
      // Every request the receiver answered before the stop is recorded as a success.
      const answered = new Set(receiver.received.map((r) => r.headers['webhook-id']));
      expect(await count(`SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'succeeded' AND event_id = ANY($1)`, [[...answered]])).toBe(answered.size);
      expect(await count(`SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending' AND attempts > 0`)).toBe(0);

      receiver.answer = () => ({ status: 200, body: 'ok' });
      await start('delivery-worker');
      await waitFor('every delivery', async () => (await count(`SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'succeeded'`)) === 40);
      const ids = new Set(receiver.received.map((r) => r.headers['webhook-id']));
      expect(ids.size).toBe(40);
      expect(receiver.received.length).toBe(40); // nothing sent twice: the stop recorded what it sent
      expect(await settledUsage(db, account.accountId)).toEqual({ used: 40, reserved: 0 });
    } finally {
      await receiver.close();
    }
  }, 90_000);

  it('change-detector: batches in flight commit or go back to the queue; every observation applied once', async () => {
    const total = 4000;
    const lines = Array.from({ length: total }, (_, i) =>
      JSON.stringify({
        source: 'bringatrailer',
        source_auction_id: `graceful-${i}`,
        observed_at: new Date().toISOString(),
        auction: { url: `https://bringatrailer.com/listing/graceful-${i}`, title: `1967 Porsche 911S ${i}`, status: 'sold', price: 100000 + i, currency: 'USD', make: 'Porsche', model: '911' },
        bids: [],
      }),
    );
    const file = join(dir, 'observations.ndjson');
    writeFileSync(file, lines.join('\n') + '\n');
    const { app: detector } = await start('change-detector', { OBSERVATION_BATCH_SIZE: '100' });
    await run(process.execPath, [join(DIST, 'ingest', 'src', 'main.js'), file], { env: { ...process.env, ...env } });
    const stored = () => count(`SELECT count(*) AS n FROM auctions WHERE source_auction_id LIKE 'graceful-%'`);
    await waitFor('the stream under way', async () => (await stored()) > 0, 20_000);
    const stop = await terminate(detector);
    expect({ code: stop.code, signal: stop.signal }).toEqual({ code: 0, signal: null });
    const atStop = await stored();
    expect(atStop).toBeLessThan(total); // stopped mid-stream, or this proves nothing

    await start('change-detector', { OBSERVATION_BATCH_SIZE: '100' });
    await waitFor('every observation', async () => (await stored()) === total, 60_000);
    expect(await count(`SELECT count(*) AS n FROM events WHERE type = 'auction.ended' AND payload::text LIKE '%graceful-%'`)).toBe(0);
    // Each auction's one event (first seen in a final state): created once, whatever was redelivered.
    expect(
      await count(
        `SELECT count(*) AS n FROM (SELECT e.auction_id FROM events e JOIN auctions a ON a.id = e.auction_id
          WHERE a.source_auction_id LIKE 'graceful-%' GROUP BY e.auction_id HAVING count(*) > 1) dup`,
      ),
    ).toBe(0);
    expect(
      await count(`SELECT count(DISTINCT e.auction_id) AS n FROM events e JOIN auctions a ON a.id = e.auction_id WHERE a.source_auction_id LIKE 'graceful-%'`),
    ).toBe(total);
  }, 120_000);

  it('query service and gateway: requests in flight are answered when either stops', async () => {
    const { app: first } = await start('query');
    await start('query');
    const { app: gateway, port } = await start('gateway', { METERING_ENABLED: 'false', RPC_TIMEOUT_MS: '5000' });
    const url = `http://127.0.0.1:${port}/auctions?make=Porsche&limit=5`;
    const statuses: (number | string)[] = [];
    let stopping = false;
    let total = -1;
    const lane = async () => {
      while (!stopping) {
        const res = await fetch(url);
        const body = await res.text();
        statuses.push(res.status === 200 ? 200 : `${res.status} ${body}`);
        if (res.status === 200) total = (JSON.parse(body) as { meta: { total: number } }).meta.total;
      }
    };
    const lanes = Array.from({ length: 8 }, lane);
    // Answers before the stop (both replicas serving), and after it (the other one alone).
    await waitFor('answers before the stop', async () => statuses.length >= 50);
    const stop = await terminate(first);
    const atStop = statuses.length;
    await waitFor('answers after the stop', async () => statuses.length >= atStop + 50);
    stopping = true;
    await Promise.all(lanes);
    expect({ code: stop.code, signal: stop.signal }).toEqual({ code: 0, signal: null });
    expect(statuses.filter((s) => s !== 200)).toEqual([]);

    // The gateway: requests in flight when SIGTERM arrives are answered before it exits. With no
    // query replica up they wait at the gateway for an answer; one comes up after the signal.
    const second = running.filter((app) => app.name === 'query' && app.child.exitCode === null);
    for (const app of second) expect(await terminate(app)).toMatchObject({ code: 0, signal: null });
    const inFlight = Array.from({ length: 10 }, () =>
      fetch(url).then(async (res) => ({ status: res.status, total: ((await res.json()) as { meta?: { total: number } }).meta?.total })),
    );
    await waitFor('the ten requests waiting for a query replica', async () => (await queued(Queues.QueryRpc)) === 10);
    const gatewayStop = terminate(gateway);
    // The gateway has begun to stop (it refuses new connections) while the ten still wait.
    await waitFor('the gateway to stop listening', () => fetch(`http://127.0.0.1:${port}/health/live`).then(() => false, () => true));
    await start('query');
    const answers = await Promise.allSettled(inFlight);
    expect(await gatewayStop).toMatchObject({ code: 0, signal: null });
    expect(answers.map((a) => (a.status === 'fulfilled' ? a.value : String(a.reason)))).toEqual(Array.from({ length: 10 }, () => ({ status: 200, total })));
    // And it takes no new connection once stopped.
    await expect(fetch(url)).rejects.toThrow();
  }, 90_000);
});
