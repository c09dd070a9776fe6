import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createDataSource } from '@cars/persistence';
import { createDatabase, createVhost, deleteVhost, dropDatabase } from '@cars/testing';
import { DataSource } from 'typeorm';
import { createTestAccount } from './support/accounts';
import { bearer, request } from './support/http';
import { AppProcess, freePort, startApp, waitForOk } from './support/processes';
import { parsePrometheus, Sample, sampleValue } from './support/prometheus';
import { Receiver, startReceiver } from './support/receiver';

const run = promisify(execFile);
const DIST = join(__dirname, '../../dist/tools');
const OBSERVATIONS = 5;

/**
 * Every app serves Prometheus metrics (the gateway on its port, the others on their health port).
 * After known traffic — API requests (one refused for an exhausted allowance, one to no route),
 * observations (one malformed) through the change-detector, their events delivered to a webhook
 * endpoint — each app's series carry exactly what that traffic should have left.
 */
describe('metrics of every app after traffic', () => {
  const name = `${process.env.TEST_RUN_ID}_metrics`.toLowerCase();
  const apps = new Map<string, AppProcess>();
  const metricsUrls = new Map<string, string>();
  let env: Record<string, string>;
  let gatewayUrl: string;
  let db: DataSource;
  let receiver: Receiver;
  let dir: string;

  const scrape = async (app: string): Promise<Sample[]> => {
    const res = await fetch(metricsUrls.get(app)!);
    expect({ app, status: res.status, type: res.headers.get('content-type') }).toEqual({ app, status: 200, type: expect.stringContaining('text/plain') });
    return parsePrometheus(await res.text());
  };

  const waitFor = async (what: string, check: () => Promise<boolean>, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${[...apps.values()].map((a) => a.output()).join('\n').slice(-4000)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'metrics-'));
    env = { DATABASE_URL: await createDatabase(name), RABBITMQ_URL: createVhost(name), DATABASE_POOL_SIZE: '3', WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true' };
    await run(process.execPath, [join(DIST, 'admin', 'src', 'main.js'), 'db:migrate'], { env: { ...process.env, ...env } });
    db = await createDataSource({ url: env.DATABASE_URL, poolSize: 2 }).initialize();
    receiver = await startReceiver();
    for (const app of ['query', 'stats', 'webhooks', 'change-detector', 'delivery-worker']) {
      const port = await freePort();
      apps.set(app, startApp(app, { ...env, HEALTH_PORT: String(port), LOG_LEVEL: 'warn' }));
      metricsUrls.set(app, `http://127.0.0.1:${port}/metrics`);
      await waitForOk(`http://127.0.0.1:${port}/health/ready`, 30_000);
    }
    const port = await freePort();
    apps.set('gateway', startApp('gateway', { ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' }));
    gatewayUrl = `http://127.0.0.1:${port}`;
    metricsUrls.set('gateway', `${gatewayUrl}/metrics`);
    await waitForOk(`${gatewayUrl}/health/ready`, 30_000);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([...apps.values()].map((app) => app.stop()));
    await db?.destroy();
    await receiver?.close();
    deleteVhost(name);
    await dropDatabase(name);
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts API requests by route template, refusals by cause, and RPC round trips', async () => {
    const paid = await createTestAccount(db, { plan: '10k' });
    const exhausted = await createTestAccount(db, { plan: '1k', used: 1000 });
    for (let i = 0; i < 3; i += 1) expect((await request(`${gatewayUrl}/auctions?limit=1`, bearer(paid.apiKey))).status).toBe(200);
    expect((await request(`${gatewayUrl}/auctions/424242/bids`, bearer(paid.apiKey))).status).toBe(404);
    expect((await request(`${gatewayUrl}/auctions?limit=1`, bearer(exhausted.apiKey))).status).toBe(429);
    expect((await request(`${gatewayUrl}/no/such/route`)).status).toBe(404);

    const samples = await scrape('gateway');
    const auctions = { method: 'GET', route: '/auctions', status: '200' };
    expect(sampleValue(samples, 'http_requests_total', auctions)).toBe(3);
    expect(sampleValue(samples, 'http_request_duration_seconds_count', auctions)).toBe(3);
    expect(sampleValue(samples, 'http_request_duration_seconds_sum', auctions)).toBeGreaterThan(0);
    expect(sampleValue(samples, 'http_requests_total', { route: '/auctions/:auction_id/bids', status: '404' })).toBe(1);
    expect(sampleValue(samples, 'http_requests_total', { route: '/auctions', status: '429' })).toBe(1);
    expect(sampleValue(samples, 'http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
    expect(sampleValue(samples, 'api_allowance_rejections_total', { cause: 'monthly' })).toBe(1);
    // Ids never become labels: the bids route is one template whatever the auction.
    expect(samples.some((s) => Object.values(s.labels).some((v) => v.includes('424242')))).toBe(false);
    const rpc = samples.filter((s) => s.name === 'rpc_client_duration_seconds_count' && s.labels.outcome === 'answered');
    expect(rpc.reduce((sum, s) => sum + s.value, 0)).toBe(4);
    expect(sampleValue(samples, 'process_cpu_seconds_total')).toBeGreaterThan(0);
  });

  it('counts observations consumed, acknowledged and dead-lettered, and deliveries by outcome', async () => {
    const paid = await createTestAccount(db, { plan: '10k' });
    const created = await request(`${gatewayUrl}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${paid.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url('/metrics'), event_types: ['auction.created'] }),
    });
    expect(created.status).toBe(201);
    const lines = Array.from({ length: OBSERVATIONS }, (_, i) =>
      JSON.stringify({
        source: 'bringatrailer',
        source_auction_id: `metrics-${i}`,
        observed_at: new Date().toISOString(),
        auction: { url: `https://bringatrailer.com/listing/metrics-${i}`, title: `1967 Porsche 911S ${i}`, status: 'active', make: 'Porsche', model: '911' },
        bids: [],
      }),
    );
    const file = join(dir, 'observations.ndjson');
    // A bid whose auction is not stored yet waits, parked.
    const orphanBid = JSON.stringify({
      source: 'bringatrailer',
      source_auction_id: 'metrics-orphan',
      observed_at: new Date().toISOString(),
      bids: [{ source_bid_id: 'b-1', bidder_name: 'flat6fan', amount: 1000, currency: 'USD', bid_at: '2025-06-01T18:00:00' }],
    });
    writeFileSync(file, [...lines, orphanBid, '{"not": "an observation"}'].join('\n') + '\n');
    await run(process.execPath, [join(DIST, 'ingest', 'src', 'main.js'), file, '--wait'], { env: { ...process.env, ...env } });
    await waitFor('every delivery', async () => receiver.received.length >= OBSERVATIONS);

    let detector: Sample[] = [];
    await waitFor('the outbox relayed', async () => {
      detector = await scrape('change-detector');
      return sampleValue(detector, 'outbox_unpublished_events') === 0;
    });
    const observations = { queue: 'observations' };
    expect(sampleValue(detector, 'messages_consumed_total', observations)).toBe(OBSERVATIONS + 2);
    expect(sampleValue(detector, 'messages_acked_total', observations)).toBe(OBSERVATIONS + 2);
    expect(sampleValue(detector, 'messages_dead_lettered_total', observations)).toBe(1);
    expect(sampleValue(detector, 'outbox_oldest_unpublished_event_age_seconds')).toBe(0);
    expect(sampleValue(detector, 'pending_observations', { reason: 'parent auction not stored' })).toBe(1);
    expect(sampleValue(detector, 'pending_observations_oldest_age_seconds')).toBeGreaterThan(0);
    expect(sampleValue(detector, 'process_cpu_seconds_total')).toBeGreaterThan(0);

    let worker: Sample[] = [];
    await waitFor('the attempts recorded', async () => {
      worker = await scrape('delivery-worker');
      return sampleValue(worker, 'webhook_delivery_attempts_total', { outcome: 'succeeded', error: 'none' }) === OBSERVATIONS;
    });
    expect(sampleValue(worker, 'webhook_delivery_attempt_duration_seconds_count', { outcome: 'succeeded' })).toBe(OBSERVATIONS);
    expect(sampleValue(worker, 'webhook_deliveries_waiting', { reason: 'due' })).toBe(0);
    expect(sampleValue(worker, 'webhook_deliveries_waiting', { reason: 'allowance' })).toBe(0);
    expect(sampleValue(worker, 'webhook_oldest_pending_delivery_age_seconds')).toBe(0);
    // Every message the relay published (one event each, or a batch of them) woke the worker.
    expect(sampleValue(detector, 'outbox_published_events_total')).toBeGreaterThanOrEqual(OBSERVATIONS);
    const relayed = sampleValue(detector, 'outbox_published_messages_total') ?? 0;
    expect(relayed).toBeGreaterThanOrEqual(1);
    expect(sampleValue(worker, 'messages_consumed_total', { queue: 'delivery.events' })).toBeGreaterThanOrEqual(relayed);
  }, 60_000);

  it('shows a backed-up endpoint: pending deliveries by reason and the oldest one’s age', async () => {
    const capped = await createTestAccount(db, { plan: '1k', used: 1000 });
    const created = await request(`${gatewayUrl}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${capped.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url('/capped'), event_types: ['auction.ended'] }),
    });
    expect(created.status).toBe(201);
    await db.query(
      `INSERT INTO events (id, type, api_version, created_at, payload, make, source)
       VALUES ('evt_metrics_waiting', 'auction.ended', '2026-10-17', now(), '{"id":"evt_metrics_waiting"}', 'Porsche', 'bringatrailer')`,
    );
    let worker: Sample[] = [];
    await waitFor('an allowance wait', async () => {
      worker = await scrape('delivery-worker');
      return sampleValue(worker, 'webhook_deliveries_waiting', { reason: 'allowance' }) === 1;
    });
    expect(sampleValue(worker, 'webhook_oldest_pending_delivery_age_seconds')).toBeGreaterThan(0);
    expect(sampleValue(worker, 'webhook_oldest_pending_delivery_age_seconds')).toBeLessThan(60);
  }, 60_000);

  it('serves the process metrics of the services behind the broker', async () => {
    for (const app of ['query', 'stats', 'webhooks']) {
      const samples = await scrape(app);
      expect({ app, cpu: (sampleValue(samples, 'process_cpu_seconds_total') ?? 0) > 0 }).toEqual({ app, cpu: true });
      expect({ app, heap: (sampleValue(samples, 'nodejs_heap_size_used_bytes') ?? 0) > 1e6 }).toEqual({ app, heap: true });
    }
  });
});
