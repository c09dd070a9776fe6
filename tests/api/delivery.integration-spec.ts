import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { INestApplicationContext } from '@nestjs/common';
import { getUsage, setPlan } from '@cars/accounts';
import { buildEventEnvelope, EventType, NotifyChannels, Observation, Queues } from '@cars/contracts';
import { DatabaseModule, pgPoolOf } from '@cars/persistence';
import { DeliveryModule, RetentionService } from '@cars/service-delivery';
import { NormalizationService, ObservationProcessor } from '@cars/service-change-detector';
import { verifyWebhook } from '@cars/signing';
import { openTestDataSource, useIsolatedQueryEnvironment } from '@cars/testing';
import { DataSource } from 'typeorm';
import { createTestAccount, TestAccount } from './support/accounts';
import { makeCertificate, Receiver, startReceiver } from './support/receiver';
import { startTestStack, TestStack, testWebhooksModule } from './support/stack';
import { WebhooksApi } from './support/webhooks-api';

jest.setTimeout(60_000);

const silent = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };
/** The schedule scaled down: 1 min, 5 min, 30 min, 2 h, 8 h become these milliseconds. */
const DELAYS = [200, 400, 600, 800, 1000];

/**
 * The delivery worker against real receivers on loopback (one over HTTPS with a certificate made
 * for the run), with subscriptions made through the gateway and events written to the outbox as
 * the change-detector writes them. Every delivery is verified with the standardwebhooks library.
 */
describe('delivery worker', () => {
  let env: { restore(): Promise<void> };
  let db: DataSource;
  let stack: TestStack;
  let api: WebhooksApi;
  let worker: INestApplicationContext;
  let receiver: Receiver;
  let secure: Receiver;
  const dns = new Map<string, string[]>([['receiver.test', ['127.0.0.1']]]);
  const resolver = async (host: string) => {
    const found = dns.get(host.toLowerCase());
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };

  const waitFor = async <T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await check();
      if (value) return value;
      if (Date.now() > deadline) {
        const recent = await db.query(
          `SELECT status, attempts, waiting_reason, last_error, lease_expires_at, next_attempt_at FROM webhook_deliveries ORDER BY updated_at DESC LIMIT 3`,
        );
        throw new Error(`timed out waiting for ${what}; latest deliveries: ${JSON.stringify(recent)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  let hooks = 0;
  /** A subscription of its own path on the receiver (so each test reads only its own requests). */
  const subscribe = async (account: TestAccount, body: Record<string, unknown>) => {
    hooks += 1;
    const res = await api.post(account.apiKey, '/webhooks', { url: receiver.url(`/h${hooks}`), event_types: ['auction.ended'], ...body });
    expect({ status: res.status, body: res.body }).toMatchObject({ status: 201 });
    return { id: res.body.data.id as string, secret: res.body.secret as string, path: new URL(res.body.data.url).pathname };
  };

  /** An event as the change-detector writes it: envelope, routing context, the database clock. */
  const emit = async (
    type: EventType,
    routing: { make?: string | null; source?: string | null; auction_id?: string | null; listed_make?: string | null } = {},
  ): Promise<string> => {
    const [{ now }] = await db.query(`SELECT now() AS now`);
    const data =
      type === 'bid.created'
        ? { bid: { id: '901', auction_id: routing.auction_id ?? '1', amount: 1000, currency: 'USD', bid_at: '2026-11-20T10:00:00' } }
        : { auction: { id: routing.auction_id ?? '1', source: routing.source ?? 'bringatrailer', make: routing.make ?? 'Porsche' }, changes: {} };
    const envelope = buildEventEnvelope(type, data as never, now);
    await db.query(
      `INSERT INTO events (id, type, api_version, created_at, payload, auction_id, make, source, listed_make)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        envelope.id, type, envelope.api_version, now, JSON.stringify(envelope), routing.auction_id ?? null,
        routing.make === undefined ? 'Porsche' : routing.make, routing.source ?? null, routing.listed_make ?? null,
      ],
    );
    return envelope.id;
  };

  const deliveryOf = async (eventId: string, subscriptionId: string) =>
    (
      await db.query(`SELECT * FROM webhook_deliveries WHERE event_id = $1 AND subscription_id = $2`, [eventId, subscriptionId.slice(4)])
    )[0];
  const finished = (eventId: string, subscriptionId: string) =>
    waitFor(`delivery of ${eventId}`, async () => {
      const row = await deliveryOf(eventId, subscriptionId);
      return row && ['succeeded', 'failed', 'canceled'].includes(row.status) ? row : undefined;
    });
  const receivedFor = (r: Receiver, eventId: string, hook: { path: string }) =>
    r.received.filter((req) => req.headers['webhook-id'] === eventId && req.path === hook.path);

  beforeAll(async () => {
    env = await useIsolatedQueryEnvironment('delivery');
    db = await openTestDataSource();
    const certificate = makeCertificate();
    receiver = await startReceiver();
    secure = await startReceiver({ tls: certificate, host: 'receiver.test' });
    stack = await startTestStack({
      services: [{ queue: Queues.WebhooksRpc, module: testWebhooksModule({ allowPrivateDestinations: true, resolver }) }],
      access: { burstCapacity: 100_000, burstRatePerSecond: 100_000 },
    });
    api = await WebhooksApi.open(stack.url);
    @Module({
      imports: [
        DatabaseModule.forRoot({ url: process.env.DATABASE_URL!, poolSize: 6 }),
        DeliveryModule.forRoot({
          databaseUrl: process.env.DATABASE_URL!,
          secretKeys: process.env.WEBHOOK_SECRET_KEY!,
          allowPrivateDestinations: true,
          resolver,
          tls: { ca: certificate.cert },
          retryDelaysMs: DELAYS,
          retryJitter: 0,
          receiverTimeoutMs: 1000,
          sweepIntervalMs: 100,
          // The circuit's backoff scaled down (30 s doubling to 10 min), so failing endpoints probe often.
          circuitBackoffMs: 100,
          circuitMaxBackoffMs: 400,
        }),
      ],
    })
    class WorkerRoot {}
    worker = await NestFactory.createApplicationContext(WorkerRoot, { logger: silent });
    await worker.init();
  });

  beforeEach(() => {
    receiver.answer = () => ({ status: 200, body: 'ok' });
    secure.answer = () => ({ status: 200, body: 'ok' });
  });

  // Each test's events are for its own subscriptions only.
  afterEach(async () => {
    await db.query(`UPDATE webhook_subscriptions SET enabled = false`);
  });

  afterAll(async () => {
    await worker?.close();
    await stack?.close();
    await receiver?.close();
    await secure?.close();
    await db?.destroy();
    await env?.restore();
  });

  it('delivers a matching event over HTTPS, signed per Standard Webhooks, and charges one unit', async () => {
    const account = await createTestAccount(db, { plan: '10k' });
    const hook = { ...(await subscribe(account, { url: secure.url() })), path: '/hook' };
    const before = await getUsage(pgPoolOf(db), account.accountId);
    const eventId = await emit('auction.ended', { make: 'Porsche', source: 'bringatrailer', auction_id: '7' });
    const row = await finished(eventId, hook.id);
    expect(row).toMatchObject({ status: 'succeeded', attempts: 1, last_response_status: 200, last_error: null, last_response_excerpt: 'ok' });
    const [request] = receivedFor(secure, eventId, hook);
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/hook');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toMatch(/^ClassicCarAuctionData-Webhooks\//);
    expect(request.headers.host).toBe(`receiver.test:${secure.port}`);
    const payload = verifyWebhook(hook.secret, request.body, request.headers) as { id: string; type: string };
    expect(payload).toMatchObject({ id: eventId, type: 'auction.ended', api_version: '2026-10-17' });
    expect(request.body).toBe(row.payload);
    expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(5);
    const after = await getUsage(pgPoolOf(db), account.accountId);
    expect(after.used - before.used).toBe(1);
    expect(after.reserved).toBe(0);
  });

  it('matches event types and every filter (AND), bids on their parent’s context, and charges each endpoint', async () => {
    const account = await createTestAccount(db, { plan: '100k' });
    const all = await subscribe(account, { event_types: ['auction.ended', 'bid.created'] });
    const porsche = await subscribe(account, { filters: { make: 'porsche' } });
    const bat = await subscribe(account, { filters: { source: 'BringATrailer', make: 'PORSCHE' } });
    const auction7 = await subscribe(account, { event_types: ['bid.created', 'auction.ended'], filters: { auction_id: '7' } });
    const updatesOnly = await subscribe(account, { event_types: ['auction.updated'] });
    const e1 = await emit('auction.ended', { make: 'Porsche', source: 'bringatrailer', auction_id: '7' });
    const e2 = await emit('auction.ended', { make: 'Ferrari', source: 'bringatrailer', auction_id: '8' });
    const e3 = await emit('bid.created', { make: 'Porsche', source: 'carsandbids', auction_id: '7' });
    const targets = { all, porsche, bat, auction7, updatesOnly };
    const expected: Record<string, string[]> = {
      [e1]: ['all', 'porsche', 'bat', 'auction7'],
      [e2]: ['all'],
      [e3]: ['all', 'auction7'],
    };
    const before = await getUsage(pgPoolOf(db), account.accountId);
    await waitFor('deliveries', async () => {
      const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE account_id = $1 AND status = 'succeeded'`, [
        account.accountId,
      ]);
      return n === 7;
    });
    for (const [eventId, names] of Object.entries(expected)) {
      const got = [];
      for (const [name, hook] of Object.entries(targets)) if (await deliveryOf(eventId, hook.id)) got.push(name);
      expect({ eventId, got }).toEqual({ eventId, got: names });
    }
    expect((await getUsage(pgPoolOf(db), account.accountId)).used - before.used).toBe(7);
  });

  it('sends only what was observed after the activation boundary, and skips what was observed while paused', async () => {
    const account = await createTestAccount(db, { plan: '10k' });
    const early = await emit('auction.ended', { make: 'Porsche' });
    const hook = await subscribe(account, {});
    await api.patch(account.apiKey, `/webhooks/${hook.id}`, { enabled: false });
    const whilePaused = await emit('auction.ended', { make: 'Porsche' });
    await api.patch(account.apiKey, `/webhooks/${hook.id}`, { enabled: true });
    const after = await emit('auction.ended', { make: 'Porsche' });
    await finished(after, hook.id);
    expect(await deliveryOf(early, hook.id)).toBeUndefined();
    expect(await deliveryOf(whilePaused, hook.id)).toBeUndefined();
  });

  it('runs the whole schedule: six attempts with the scaled delays, then failed — failures free', async () => {
    const account = await createTestAccount(db, { plan: '10k' });
    const hook = await subscribe(account, {});
    receiver.answer = (req) => (req.path === hook.path ? { status: 500, body: 'x'.repeat(5000) } : { status: 200 });
    const before = await getUsage(pgPoolOf(db), account.accountId);
    const eventId = await emit('auction.ended');
    const row = await finished(eventId, hook.id);
    expect(row).toMatchObject({ status: 'failed', attempts: 6, max_attempts: 6, last_error: 'http_status', last_response_status: 500, next_attempt_at: null });
    expect(row.last_response_excerpt).toHaveLength(4096);
    const times = receivedFor(receiver, eventId, hook).map((r) => r.at);
    expect(times).toHaveLength(6);
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    gaps.forEach((gap, i) => expect({ i, gap, atLeast: gap >= DELAYS[i] - 20 }).toEqual({ i, gap, atLeast: true }));
    // Every attempt: the same event id and body, a fresh timestamp and signature.
    const bodies = new Set(receivedFor(receiver, eventId, hook).map((r) => r.body));
    expect(bodies.size).toBe(1);
    const usage = await getUsage(pgPoolOf(db), account.accountId);
    expect({ used: usage.used - before.used, reserved: usage.reserved }).toEqual({ used: 0, reserved: 0 });
    const health = (await api.get(account.apiKey, `/webhooks/${hook.id}`)).body.data.health;
    expect(health).toMatchObject({ consecutive_failures: 6, last_success_at: null, pending_deliveries: 0, oldest_pending_at: null });
    expect(Date.parse(health.last_failure_at)).toBeGreaterThan(times[5] - 5000);
  });

  it('succeeds on a later attempt and charges once', async () => {
    const account = await createTestAccount(db, { plan: '10k' });
    const hook = await subscribe(account, {});
    let failures = 0;
    receiver.answer = (req) => (req.path === hook.path && failures++ < 2 ? { status: 503 } : { status: 204 });
    const before = await getUsage(pgPoolOf(db), account.accountId);
    const eventId = await emit('auction.ended');
    expect(await finished(eventId, hook.id)).toMatchObject({ status: 'succeeded', attempts: 3, last_response_status: 204 });
    expect((await getUsage(pgPoolOf(db), account.accountId)).used - before.used).toBe(1);
  });

  it.each([
    ['a redirect', { status: 302, headers: { location: 'https://example.com/' } }, 'redirect', 302],
    ['a timeout', { status: 200, delayMs: 1500 }, 'timeout', null],
  ] as const)('records %s as a failure', async (_what, answer, code, status) => {
    const account = await createTestAccount(db, { plan: '10k' });
    const hook = await subscribe(account, {});
    receiver.answer = (req) => (req.path === hook.path ? { ...answer } : { status: 200 });
    const eventId = await emit('auction.ended');
    const row = await waitFor('first attempt', async () => {
      const r = await deliveryOf(eventId, hook.id);
      return r && r.attempts >= 1 ? r : undefined;
    });
    expect(row).toMatchObject({ last_error: code, last_response_status: status });
    await api.patch(account.apiKey, `/webhooks/${hook.id}`, { enabled: false });
  });

  it('records a refused connection', async () => {
    const account = await createTestAccount(db, { plan: '10k' });
    const closed = await startReceiver();
    const port = closed.port;
    await closed.close();
    const hook = await subscribe(account, { url: `http://127.0.0.1:${port}/gone` });
    const eventId = await emit('auction.ended');
    const row = await waitFor('first attempt', async () => {
      const r = await deliveryOf(eventId, hook.id);
      return r && r.attempts >= 1 ? r : undefined;
    });
    expect(row.last_error).toBe('connect_error');
    await api.patch(account.apiKey, `/webhooks/${hook.id}`, { enabled: false });
  });

  it('signs with both secrets for 24 h after a rotation', async () => {
    const account = await createTestAccount(db, { plan: '10k' });
    const hook = await subscribe(account, {});
    const rotated = (await api.post(account.apiKey, `/webhooks/${hook.id}/secret/rotate`)).body.data.secret as string;
    const eventId = await emit('auction.ended');
    await finished(eventId, hook.id);
    const [request] = receivedFor(receiver, eventId, hook);
    expect(request.headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifyWebhook(rotated, request.body, request.headers)).toMatchObject({ id: eventId });
    expect(verifyWebhook(hook.secret, request.body, request.headers)).toMatchObject({ id: eventId });
    await db.query(`UPDATE webhook_subscriptions SET previous_secret_expires_at = now() WHERE id = $1`, [hook.id.slice(4)]);
    const later = await emit('auction.ended');
    await finished(later, hook.id);
    const [next] = receivedFor(receiver, later, hook);
    expect(next.headers['webhook-signature'].split(' ')).toHaveLength(1);
    expect(() => verifyWebhook(hook.secret, next.body, next.headers)).toThrow();
  });

  it('delivers a test event free of charge, even with the allowance exhausted', async () => {
    const account = await createTestAccount(db, { plan: '1k', used: 1000 });
    const hook = await subscribe(account, {});
    const queued = await api.post(account.apiKey, `/webhooks/${hook.id}/test`);
    const eventId = queued.body.data.event_id;
    expect(await finished(eventId, hook.id)).toMatchObject({ status: 'succeeded', attempts: 1 });
    const [request] = receivedFor(receiver, eventId, hook);
    expect(verifyWebhook(hook.secret, request.body, request.headers)).toMatchObject({
      type: 'webhook.test',
      data: { message: 'This is a test event from the Classic Car Auction Data Service.' },
    });
    expect(await getUsage(pgPoolOf(db), account.accountId)).toMatchObject({ used: 1000, reserved: 0 });
  });

  it('waits on an exhausted allowance without using attempts, and goes out in order once the plan is upgraded', async () => {
    const account = await createTestAccount(db, { plan: '1k', used: 1000 });
    const hook = await subscribe(account, {});
    const events = [await emit('auction.ended'), await emit('auction.ended'), await emit('auction.ended')];
    await waitFor('allowance waits', async () => {
      const rows = await Promise.all(events.map((e) => deliveryOf(e, hook.id)));
      return rows.every((r) => r && r.waiting_reason === 'allowance' && r.status === 'pending' && r.attempts === 0);
    });
    expect(receivedFor(receiver, events[0], hook)).toHaveLength(0);
    const upgradedAt = Date.now();
    await setPlan(pgPoolOf(db), { accountId: account.accountId, plan: '10k' });
    for (const eventId of events) await finished(eventId, hook.id);
    const arrivals = events.map((e) => receivedFor(receiver, e, hook)[0].at);
    expect(Math.max(...arrivals) - upgradedAt).toBeLessThan(5000);
    expect(await getUsage(pgPoolOf(db), account.accountId)).toMatchObject({ used: 1003, reserved: 0 });
  });

  it('retries a failed delivery through the route with the same event id and body', async () => {
    const account = await createTestAccount(db, { plan: '10k' });
    const hook = await subscribe(account, {});
    let up = false;
    receiver.answer = (req) => (req.path === hook.path && !up ? { status: 500 } : { status: 200 });
    const eventId = await emit('auction.ended');
    const failed = await finished(eventId, hook.id);
    expect(failed.status).toBe('failed');
    up = true;
    const res = await api.post(account.apiKey, `/webhooks/${hook.id}/deliveries/whd_${failed.id}/retry`);
    expect(res.status).toBe(202);
    const row = await finished(eventId, hook.id);
    expect(row).toMatchObject({ status: 'succeeded', attempts: 7, max_attempts: 12 });
    const requests = receivedFor(receiver, eventId, hook);
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    expect(verifyWebhook(hook.secret, requests[6].body, requests[6].headers)).toMatchObject({ id: eventId });
  });

  it('counts an attempt whose worker died (its lease expired) as interrupted and releases its unit', async () => {
    const account = await createTestAccount(db, { plan: '10k' });
    const hook = await subscribe(account, {});
    await api.patch(account.apiKey, `/webhooks/${hook.id}`, { enabled: false });
    const [{ period }] = await db.query(`SELECT to_char(date_trunc('month', now() AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS period`);
    await db.query(
      `INSERT INTO usage_ledger (account_id, period, used, reserved) VALUES ($1, $2, 0, 1)
       ON CONFLICT (account_id, period) DO UPDATE SET reserved = usage_ledger.reserved + 1`,
      [account.accountId, period],
    );
    await db.query(`UPDATE webhook_subscriptions SET enabled = true WHERE id = $1`, [hook.id.slice(4)]);
    const [row] = await db.query(
      `INSERT INTO webhook_deliveries (subscription_id, account_id, event_id, event_type, payload, status, lease_token, lease_expires_at, reserved_period)
       VALUES ($1, $2, 'evt_crashed', 'auction.ended', '{}', 'sending', gen_random_uuid(), now() - interval '1 second', $3) RETURNING id`,
      [hook.id.slice(4), account.accountId, period],
    );
    receiver.answer = () => ({ status: 200 });
    const recovered = await waitFor('recovery', async () => {
      const [r] = await db.query(`SELECT * FROM webhook_deliveries WHERE id = $1`, [row.id]);
      return r.attempts >= 1 ? r : undefined;
    });
    expect(recovered.last_error).toBe('interrupted');
    expect(await finished('evt_crashed', hook.id)).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(await getUsage(pgPoolOf(db), account.accountId)).toMatchObject({ used: 1, reserved: 0 });
  });

  it('fans out once per (event, subscription), whatever wakes it', async () => {
    const account = await createTestAccount(db, { plan: '10k' });
    const hook = await subscribe(account, {});
    const eventId = await emit('auction.ended');
    await finished(eventId, hook.id);
    await db.query(`UPDATE events SET fanned_out_at = NULL WHERE id = $1`, [eventId]);
    await db.query(`SELECT pg_notify('${NotifyChannels.DeliveryWakeup}', 'events')`);
    await waitFor('second pass', async () => (await db.query(`SELECT fanned_out_at FROM events WHERE id = $1`, [eventId]))[0].fanned_out_at);
    const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = $1`, [eventId]);
    expect(n).toBe(1);
    expect(receivedFor(receiver, eventId, hook)).toHaveLength(1);
  });

  it('recovers failed deliveries of a window after an outage, with a new budget', async () => {
    const account = await createTestAccount(db, { plan: '10k' });
    const hook = await subscribe(account, {});
    let up = false;
    receiver.answer = (req) => (req.path === hook.path && !up ? { status: 503 } : { status: 200 });
    const events = [await emit('auction.ended'), await emit('auction.ended')];
    for (const eventId of events) expect((await finished(eventId, hook.id)).status).toBe('failed');
    const old = await emit('auction.ended');
    await finished(old, hook.id);
    await db.query(`UPDATE webhook_deliveries SET created_at = now() - interval '20 days' WHERE event_id = $1`, [old]);
    const [{ now }] = await db.query(`SELECT now() AS now`);
    const since = new Date(new Date(now).getTime() - 3_600_000).toISOString();
    expect((await api.post(account.apiKey, `/webhooks/${hook.id}/recover`, { since, until: new Date(Date.now() + 86_400_000 * 20).toISOString() })).status).toBe(400);
    up = true;
    const res = await api.post(account.apiKey, `/webhooks/${hook.id}/recover`, { since });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ data: { recovered: 2 } });
    for (const eventId of events) expect(await finished(eventId, hook.id)).toMatchObject({ status: 'succeeded', attempts: 7, max_attempts: 12 });
    expect((await deliveryOf(old, hook.id)).status).toBe('failed');
    await api.patch(account.apiKey, `/webhooks/${hook.id}`, { enabled: false });
    expect((await api.post(account.apiKey, `/webhooks/${hook.id}/recover`, { since })).status).toBe(409);
  });

  it('backs off an endpoint that keeps failing as a whole: its circuit shows in health, and resuming closes it', async () => {
    const account = await createTestAccount(db, { plan: '10k' });
    const hook = await subscribe(account, {});
    receiver.answer = (req) => (req.path === hook.path ? { status: 500 } : { status: 200 });
    const events: string[] = [];
    for (let i = 0; i < 8; i += 1) events.push(await emit('auction.ended'));
    const open = await waitFor('the circuit to open', async () => {
      const health = (await api.get(account.apiKey, `/webhooks/${hook.id}`)).body.data.health;
      return health.circuit === 'open' ? health : undefined;
    });
    expect(open.consecutive_failures).toBeGreaterThanOrEqual(5);
    expect(Date.parse(open.circuit_retry_at)).toBeGreaterThan(Date.parse(open.circuit_opened_at));
    // Waiting on the circuit uses no attempt: nothing has run out of its budget.
    const [{ failed }] = await db.query(`SELECT count(*) FILTER (WHERE status = 'failed')::int AS failed FROM webhook_deliveries WHERE subscription_id = $1`, [
      hook.id.slice(4),
    ]);
    expect(failed).toBe(0);

    expect((await api.patch(account.apiKey, `/webhooks/${hook.id}`, { enabled: false })).status).toBe(200);
    const resumed = await api.patch(account.apiKey, `/webhooks/${hook.id}`, { enabled: true });
    expect(resumed.body.data.health).toMatchObject({ circuit: 'closed', circuit_retry_at: null, circuit_opened_at: null });
    receiver.answer = () => ({ status: 200 });
    const later = await emit('auction.ended');
    expect(await finished(later, hook.id)).toMatchObject({ status: 'succeeded', attempts: 1 });
    await api.patch(account.apiKey, `/webhooks/${hook.id}`, { enabled: false });
  });

  it('a manual retry does not wait out an open circuit: its probe goes at once and closes it', async () => {
    const account = await createTestAccount(db, { plan: '10k' });
    const hook = await subscribe(account, {});
    receiver.answer = (req) => (req.path === hook.path ? { status: 503 } : { status: 200 });
    const eventId = await emit('auction.ended');
    await waitFor('the first attempt', async () => (await deliveryOf(eventId, hook.id))?.attempts >= 1);
    // The circuit open for an hour, as after many failed probes: no attempt goes by itself now.
    await db.query(
      `UPDATE webhook_subscriptions SET circuit_state = 'open', circuit_open_until = now() + interval '1 hour', circuit_opened_at = now(), circuit_opens = 6
        WHERE id = $1`,
      [hook.id.slice(4)],
    );
    const waiting = await waitFor('no attempt in flight', async () => {
      const row = await deliveryOf(eventId, hook.id);
      return row.status === 'pending' ? row : undefined;
    });
    const health = (await api.get(account.apiKey, `/webhooks/${hook.id}`)).body.data.health;
    expect(Date.parse(health.circuit_retry_at) - Date.now()).toBeGreaterThan(3_000_000);
    receiver.answer = () => ({ status: 200 });
    expect((await api.post(account.apiKey, `/webhooks/${hook.id}/deliveries/whd_${waiting.id}/retry`)).status).toBe(202);
    expect(await finished(eventId, hook.id)).toMatchObject({ status: 'succeeded', attempts: waiting.attempts + 1 });
    expect((await api.get(account.apiKey, `/webhooks/${hook.id}`)).body.data.health).toMatchObject({ circuit: 'closed', consecutive_failures: 0 });
    await api.patch(account.apiKey, `/webhooks/${hook.id}`, { enabled: false });
  });

  it.each([
    ['fails', 500, 'canceled', 0],
    ['succeeds', 200, 'succeeded', 1],
  ] as const)('pausing while an attempt is in flight: when it %s it is %s', async (_what, status, expected, charged) => {
    const account = await createTestAccount(db, { plan: '10k' });
    const hook = await subscribe(account, {});
    receiver.answer = (req) => (req.path === hook.path ? { status, delayMs: 500 } : { status: 200 });
    const before = await getUsage(pgPoolOf(db), account.accountId);
    const eventId = await emit('auction.ended');
    await waitFor('the attempt in flight', async () => (await deliveryOf(eventId, hook.id))?.status === 'sending');
    expect((await api.patch(account.apiKey, `/webhooks/${hook.id}`, { enabled: false })).status).toBe(200);
    expect(await finished(eventId, hook.id)).toMatchObject({ status: expected, attempts: 1 });
    expect((await getUsage(pgPoolOf(db), account.accountId)).used - before.used).toBe(charged);
  });

  it('removes terminal deliveries and events older than 30 days, and a bid seen again after cleanup fires nothing', async () => {
    await new NormalizationService(db).loadReference();
    const processor = new ObservationProcessor(db);
    const observation = {
      source: 'bringatrailer',
      source_auction_id: `retention-${Date.now()}`,
      observed_at: new Date().toISOString(),
      auction: {
        url: 'https://bringatrailer.com/listing/retention', title: '1967 Porsche 911S', status: 'active', price: 100000,
        currency: 'USD', year: 1967, make: 'Porsche', model: '911S', auction_end_at: '2026-12-01T19:00:00',
        auction_end_date: '2026-12-01', bid_count: 1, sale_type: 'auction', price_type: 'bid',
      },
      bids: [{ source_bid_id: 'ret-1', bidder_name: 'x', amount: 100000, currency: 'USD', bid_at: '2026-11-20T10:00:00' }],
    } as unknown as Observation;
    await processor.process(observation);
    const bidEvents = async () =>
      (await db.query(`SELECT count(*)::int AS n FROM events WHERE type = 'bid.created' AND payload::text LIKE $1`, [`%"auction_id":%`]))[0].n;
    const [bidEvent] = await db.query(`SELECT id FROM events WHERE type = 'bid.created' ORDER BY seq DESC LIMIT 1`);
    const account = await createTestAccount(db, { plan: '10k' });
    const hook = await subscribe(account, {});
    const recent = await emit('auction.ended');
    await finished(recent, hook.id);
    const oldDelivery = await emit('auction.ended');
    await finished(oldDelivery, hook.id);
    await db.query(`UPDATE webhook_deliveries SET updated_at = now() - interval '31 days' WHERE event_id = $1`, [oldDelivery]);
    await db.query(`UPDATE events SET created_at = now() - interval '31 days', published_at = now() WHERE id = ANY($1)`, [[oldDelivery, bidEvent.id]]);
    const before = await bidEvents();

    const removed = await worker.get(RetentionService).run();
    expect(removed.deliveries).toBeGreaterThanOrEqual(1);
    expect(await deliveryOf(oldDelivery, hook.id)).toBeUndefined();
    expect(await deliveryOf(recent, hook.id)).toMatchObject({ status: 'succeeded' });
    expect((await db.query(`SELECT count(*)::int AS n FROM events WHERE id = ANY($1)`, [[oldDelivery, bidEvent.id]]))[0].n).toBe(0);
    expect((await db.query(`SELECT count(*)::int AS n FROM events WHERE id = $1`, [recent]))[0].n).toBe(1);

    // The same bid observed again after its event was cleaned up: recognised, no second bid.created.
    await processor.process({ ...observation, observed_at: new Date().toISOString() });
    expect(await bidEvents()).toBe(before - 1);
  });

  it('waits for make maintenance only where a make filter meets an unknown make, then delivers or drops', async () => {
    await new NormalizationService(db).loadReference();
    const account = await createTestAccount(db, { plan: '10k' });
    const porsche = await subscribe(account, { filters: { make: 'porsche' } });
    const ferrari = await subscribe(account, { filters: { make: 'Ferrari' } });
    const any = await subscribe(account, {});
    const misspelt = await emit('auction.ended', { make: null, listed_make: '  PORSCHHE   TYPO ' });
    const nonsense = await emit('auction.ended', { make: null, listed_make: 'Zzzcar Replica Co' });
    // Without a make filter nothing waits.
    await finished(misspelt, any.id);
    await finished(nonsense, any.id);
    for (const eventId of [misspelt, nonsense]) {
      for (const hook of [porsche, ferrari]) {
        expect(await deliveryOf(eventId, hook.id)).toMatchObject({ status: 'pending', waiting_reason: 'make', attempts: 0 });
      }
    }
    // makes:alias resolves the spelling: the Porsche endpoint gets it, the Ferrari one never does.
    await db.query(`INSERT INTO make_aliases (alias, make_id) SELECT 'porschhe typo', id FROM makes WHERE name = 'Porsche'`);
    expect(await finished(misspelt, porsche.id)).toMatchObject({ status: 'succeeded', waiting_reason: null });
    await waitFor('the Ferrari delivery dropped', async () => (await deliveryOf(misspelt, ferrari.id)) === undefined);
    // makes:exclude confirms it is no make: dropped everywhere it waited.
    await db.query(`INSERT INTO make_aliases (alias, make_id, excluded) VALUES ('zzzcar replica co', NULL, true)`);
    await waitFor('the exclusion', async () => (await deliveryOf(nonsense, porsche.id)) === undefined && (await deliveryOf(nonsense, ferrari.id)) === undefined);
    expect(receivedFor(receiver, misspelt, ferrari)).toHaveLength(0);

    // The change-detector keeps the listed spelling beside an unknown canonical make.
    await new ObservationProcessor(db).process({
      source: 'bringatrailer',
      source_auction_id: `mystery-${Date.now()}`,
      observed_at: new Date().toISOString(),
      auction: {
        url: 'https://bringatrailer.com/listing/mystery', title: '1960 Mystery Roadster', status: 'active', price: 5000,
        currency: 'USD', year: 1960, make: 'Mystery Motor Works', model: 'Roadster', auction_end_at: '2026-12-01T19:00:00',
        auction_end_date: '2026-12-01', bid_count: 0, sale_type: 'auction', price_type: 'bid',
      },
      bids: [],
    } as unknown as Observation);
    const [created] = await db.query(`SELECT make, listed_make FROM events WHERE type = 'auction.created' ORDER BY seq DESC LIMIT 1`);
    expect(created).toEqual({ make: null, listed_make: 'Mystery Motor Works' });
  });
});
