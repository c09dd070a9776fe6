import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  ApiError,
  CarsClient,
  ConflictError,
  FetchLike,
  ForbiddenError,
  NotFoundError,
  RateLimitError,
  UnauthorizedError,
  ValidationError,
  verifyWebhook,
  WebhookEvent,
  WebhookVerificationError,
} from '@cars/client';
import { Observation } from '@cars/contracts';
import { DatabaseModule } from '@cars/persistence';
import { NormalizationService, ObservationProcessor } from '@cars/service-change-detector';
import { DeliveryModule } from '@cars/service-delivery';
import { insertAuctions, insertBids, openTestDataSource, useIsolatedQueryEnvironment } from '@cars/testing';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { createTestAccount, TestAccount } from './support/accounts';
import { ReceivedRequest, Receiver, startReceiver } from './support/receiver';
import { startTestGateway, startTestStack, TestStack } from './support/stack';

jest.setTimeout(60_000);

const silent = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };
const COMPLETED = 23;
const LIVE = 7;
const BIDS = 12;

/**
 * The published client (`@cars/client`) against a running gateway with the query, stats and
 * webhooks services over the run's RabbitMQ and its own database: every route, paging to the
 * end, typed errors, the burst limit; and its receiver helper against signed deliveries made by
 * the real delivery worker for events the real change-detector wrote.
 */
describe('typed client', () => {
  let env: { restore(): Promise<void> };
  let db: DataSource;
  let stack: TestStack;
  let tight: { url: string; gateway: NestFastifyApplication };
  let worker: INestApplicationContext;
  let receiver: Receiver;
  let account: TestAccount;
  let cars: CarsClient;
  let completedIds: number[];
  let liveIds: number[];
  let bidIds: number[];
  const seen: { method: string; url: string; status: number }[] = [];

  /** The global fetch, recording what went out and what came back. */
  const recordingFetch: FetchLike = async (url, init) => {
    const response = await fetch(url, init);
    seen.push({ method: init.method, url, status: response.status });
    return response;
  };
  const clientFor = (apiKey: string, options: { baseUrl?: string; maxRetries?: number } = {}) =>
    new CarsClient({ baseUrl: stack.url, apiKey, fetch: recordingFetch, ...options });

  const waitFor = async <T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await check();
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const caught = async (promise: Promise<unknown>): Promise<ApiError> => {
    try {
      await promise;
    } catch (error) {
      if (error instanceof ApiError) return error;
      throw error;
    }
    throw new Error('no error');
  };

  beforeAll(async () => {
    env = await useIsolatedQueryEnvironment('client');
    db = await openTestDataSource();
    await new NormalizationService(db).loadReference();
    completedIds = await insertAuctions(
      db,
      Array.from({ length: COMPLETED }, (_, i) => ({ price: 100_000 + i * 1000, auction_end_date: `2025-0${1 + (i % 9)}-1${i % 10}` })),
    );
    await insertAuctions(db, [{ ocd_make_name: 'BMW', ocd_model_name: 'M3', listing_make: 'BMW' }]);
    liveIds = await insertAuctions(
      db,
      Array.from({ length: LIVE }, (_, i) => ({ is_live: true, auction_end_at: `2030-01-0${1 + i}T18:00:00Z`, auction_end_date: `2030-01-0${1 + i}` })),
    );
    bidIds = await insertBids(
      db,
      liveIds[0],
      Array.from({ length: BIDS }, (_, i) => ({ amount: 10_000 + i * 500, bid_at: `2029-12-20T10:${String(10 + i)}:00Z` })),
    );
    receiver = await startReceiver();
    stack = await startTestStack({
      webhooks: { allowPrivateDestinations: true },
      access: { burstCapacity: 100_000, burstRatePerSecond: 100_000 },
    });
    // A second gateway with a burst limit small enough to hit: 2 requests, then 1 per second.
    tight = await startTestGateway({ access: { burstCapacity: 2, burstRatePerSecond: 1 } });
    @Module({
      imports: [
        DatabaseModule.forRoot({ url: process.env.DATABASE_URL!, poolSize: 4 }),
        DeliveryModule.forRoot({
          databaseUrl: process.env.DATABASE_URL!,
          secretKeys: process.env.WEBHOOK_SECRET_KEY!,
          allowPrivateDestinations: true,
          retryDelaysMs: [100, 100, 100, 100, 100],
          retryJitter: 0,
          receiverTimeoutMs: 1000,
          sweepIntervalMs: 100,
          // The endpoint circuit scaled down like the schedule.
          circuitBackoffMs: 100,
          circuitMaxBackoffMs: 400,
        }),
      ],
    })
    class WorkerRoot {}
    worker = await NestFactory.createApplicationContext(WorkerRoot, { logger: silent });
    await worker.init();
    account = await createTestAccount(db, { plan: '100k' });
    cars = clientFor(account.apiKey);
  });

  afterAll(async () => {
    await worker?.close();
    await tight?.gateway.close();
    await stack?.close();
    await receiver?.close();
    await db?.destroy();
    await env?.restore();
  });

  it('has types generated from the document this gateway serves (drift check against the running gateway)', async () => {
    // Asynchronously: the gateway answering the generator runs in this process.
    const main = join(__dirname, '../../dist/tools/client-codegen/src/main.js');
    const result = await new Promise<{ status: number; output: string }>((resolve) => {
      execFile(process.execPath, [main, '--check', '--document', `${stack.url}/openapi.json`], (error, stdout, stderr) =>
        resolve({ status: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` }),
      );
    });
    expect(result).toEqual({ status: 0, output: expect.stringContaining('up to date') });
  });

  it('reads the public routes without a key', async () => {
    const anonymous = new CarsClient({ baseUrl: stack.url, fetch: recordingFetch });
    expect((await anonymous.index()).links.openapi).toBeDefined();
    expect(await anonymous.health.live()).toEqual({ status: 'ok' });
    const ready = await anonymous.health.ready();
    expect(ready.status).toBe('ok');
    expect(ready.detail.services.query.status).toBe('up');
    expect((await anonymous.makes()).data).toEqual(expect.arrayContaining(['BMW', 'Porsche']));
    expect((await anonymous.models('Porsche')).data).toContain('911');
  });

  it('searches completed auctions and follows the cursor to the last page', async () => {
    const first = await cars.auctions.search({ make: 'Porsche', model: '911', sort: 'price', direction: 'asc', limit: 5 });
    expect(first.meta).toMatchObject({ total: COMPLETED, page: 1, limit: 5, total_pages: 5, has_more: true });
    expect(first.data.map((a) => a.price)).toEqual([100_000, 101_000, 102_000, 103_000, 104_000]);

    const before = seen.length;
    const all = [];
    for await (const auction of cars.auctions.searchAll({ make: 'Porsche', model: '911', sort: 'price', direction: 'asc', limit: 5 })) all.push(auction);
    expect(all).toHaveLength(COMPLETED);
    expect(all.map((a) => a.id).sort()).toEqual([...completedIds].sort());
    expect(all.map((a) => a.price)).toEqual([...all.map((a) => a.price)].sort((a, b) => a! - b!));
    const pages = seen.slice(before);
    expect(pages).toHaveLength(5);
    expect(pages.slice(1).every((r) => new URL(r.url).searchParams.has('cursor'))).toBe(true);
  });

  it('lists live auctions and the bids of one, paging to the end', async () => {
    const live = await cars.auctions.live({ limit: 3 });
    expect(live.meta).toMatchObject({ total: LIVE, total_pages: 3 });
    const allLive = [];
    for await (const auction of cars.auctions.liveAll({ limit: 3 })) allLive.push(auction);
    expect(allLive.map((a) => a.id)).toEqual(liveIds);
    expect(allLive[0].auction_end_at).toBe('2030-01-01T18:00:00.000Z');

    const bids = await cars.auctions.bids(liveIds[0], { sort: 'amount', direction: 'desc', limit: 5 });
    expect(bids.meta).toMatchObject({ total: BIDS, total_pages: 3 });
    expect(bids.data[0].amount).toBe(10_000 + (BIDS - 1) * 500);
    const allBids = [];
    for await (const bid of cars.auctions.bidsAll(liveIds[0], { limit: 5 })) allBids.push(bid);
    expect(allBids.map((b) => b.id)).toEqual(bidIds);
  });

  it('reads pricing statistics', async () => {
    const stats = await cars.stats({ make: 'Porsche', model: '911' });
    expect(stats).toMatchObject({ currency: 'USD', total_sales: COMPLETED, lowest_price: 100_000, highest_price: 122_000, median_price: 111_000 });
    expect(stats.price_trend).toHaveLength(12);
  });

  it('throws typed errors: 400 with details, 401, 403, 404', async () => {
    const invalid = await caught(cars.auctions.search({ limit: 1000, year_min: 1990, year_max: 1980 }));
    expect(invalid).toBeInstanceOf(ValidationError);
    expect(invalid).toMatchObject({ status: 400, error: 'Validation Error' });
    expect(Object.keys(invalid.details!).sort()).toEqual(['limit', 'year_min']);
    expect(invalid.details!.limit).toEqual(['limit must be an integer from 1 to 100']);
    const unknown = await caught(cars.auctions.search({ colour: 'green' } as never));
    expect(unknown.details).toHaveProperty('colour');

    expect(await caught(clientFor('cca_live_not_a_key').auctions.search())).toBeInstanceOf(UnauthorizedError);
    const free = await createTestAccount(db, { plan: 'free' });
    const forbidden = await caught(clientFor(free.apiKey).stats({ make: 'Porsche' }));
    expect(forbidden).toBeInstanceOf(ForbiddenError);
    expect(forbidden.error).toBe('Forbidden');
    const missing = await caught(cars.auctions.bids(999_999_999));
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing.status).toBe(404);
    expect(await caught(cars.webhooks.get('whe_00000000-0000-4000-8000-000000000000'))).toBeInstanceOf(NotFoundError);
  });

  it('waits out a burst 429 (Retry-After) and sends again, transparently', async () => {
    const burst = await createTestAccount(db, { plan: '1k' });
    const client = clientFor(burst.apiKey, { baseUrl: tight.url });
    const before = seen.length;
    const started = Date.now();
    for (let i = 0; i < 4; i += 1) expect((await client.auctions.search({ limit: 1 })).meta.total).toBe(COMPLETED + 1);
    const statuses = seen.slice(before).map((r) => r.status);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(4);
    // Each 429 was followed by the wait it asked for (Retry-After: 1).
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000 * statuses.filter((s) => s === 429).length - 50);
  });

  it('with retries off, surfaces the burst 429 as a RateLimitError carrying Retry-After', async () => {
    const burst = await createTestAccount(db, { plan: '1k' });
    const client = clientFor(burst.apiKey, { baseUrl: tight.url, maxRetries: 0 });
    let error: ApiError | undefined;
    for (let i = 0; i < 5 && !error; i += 1) error = await client.webhooks.list().then(() => undefined, (e: ApiError) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 429, error: 'Rate Limit Exceeded', kind: 'burst' });
    expect(error!.retryAfter).toBeGreaterThanOrEqual(1);
    expect(error!.message).toMatch(/^Burst limit exceeded/);
  });

  it('does not retry the monthly allowance: one request, a RateLimitError of kind monthly', async () => {
    const spent = await createTestAccount(db, { plan: '1k', used: 1000 });
    const before = seen.length;
    const error = (await caught(clientFor(spent.apiKey).auctions.search())) as RateLimitError;
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ kind: 'monthly', retryAfter: undefined, rateLimit: { limit: 1000, remaining: 0 } });
    expect(error.message).toMatch(/^Monthly request limit of 1,000/);
    expect(seen.length - before).toBe(1);
  });

  it('manages webhooks: create, get, list, edit, pause, rotate, test, deliveries, delete', async () => {
    const owner = await createTestAccount(db, { plan: '100k' });
    const client = clientFor(owner.apiKey);
    const created = await client.webhooks.create({ url: receiver.url('/crud'), event_types: ['auction.ended'], description: 'crud', filters: { make: 'Porsche' } });
    expect(created.secret).toMatch(/^whsec_/);
    const id = created.data.id;
    expect(created.data).toMatchObject({ url: receiver.url('/crud'), event_types: ['auction.ended'], filters: { make: 'Porsche' }, enabled: true });
    expect((await client.webhooks.get(id)).data.health.consecutive_failures).toBe(0);

    const others = [];
    for (let i = 0; i < 4; i += 1) others.push((await client.webhooks.create({ url: receiver.url(`/crud${i}`), event_types: ['bid.created'] })).data.id);
    expect((await client.webhooks.list({ limit: 2 })).meta).toMatchObject({ total: 5, total_pages: 3 });
    const listed = [];
    for await (const webhook of client.webhooks.listAll({ limit: 2 })) listed.push(webhook.id);
    expect(listed.sort()).toEqual([id, ...others].sort());

    const test = await client.webhooks.sendTest(id);
    expect(test.data).toMatchObject({ event_type: 'webhook.test', payload: { type: 'webhook.test', id: test.data.event_id } });
    expect(await caught(client.webhooks.sendTest(id))).toBeInstanceOf(ConflictError);

    const edited = await client.webhooks.update(id, { description: 'edited', event_types: ['auction.ended', 'bid.created'], filters: {} });
    expect(edited.data).toMatchObject({ description: 'edited', event_types: ['auction.ended', 'bid.created'], filters: {} });
    expect((await client.webhooks.update(id, { enabled: false })).data.enabled).toBe(false);
    expect((await client.webhooks.update(id, { enabled: true })).data.enabled).toBe(true);
    const invalid = await caught(client.webhooks.update(id, { event_types: ['webhook.test' as never] }));
    expect(invalid).toBeInstanceOf(ValidationError);
    expect(Object.keys(invalid.details!).some((member) => member.startsWith('event_types'))).toBe(true);

    const rotated = await client.webhooks.rotateSecret(id);
    expect(rotated.data.secret).toMatch(/^whsec_/);
    expect(rotated.data.secret).not.toBe(created.secret);

    const delivered = await waitFor('the test delivery', async () => {
      const { data } = await client.webhooks.deliveries(id);
      return data.find((d) => d.id === test.data.id && d.status === 'succeeded');
    });
    expect(delivered).toMatchObject({ attempts: 1, last_response_status: 200 });

    const recovered = await client.webhooks.recover(id, { since: new Date(Date.now() - 3_600_000).toISOString() });
    expect(recovered.data.recovered).toBe(0);

    for (const hook of [id, ...others]) await client.webhooks.delete(hook);
    expect(await caught(client.webhooks.get(id))).toBeInstanceOf(NotFoundError);
    expect((await client.webhooks.list()).meta.total).toBe(0);
  });

  describe('receiver helper against the delivery worker', () => {
    let processor: ObservationProcessor;
    const requestsTo = (path: string) => receiver.received.filter((r) => r.path === path);

    beforeAll(() => {
      processor = new ObservationProcessor(db);
    });

    /** An observation as a scraper sends it: a live Bring a Trailer auction and its bids. */
    const observation = (key: string, auction: Record<string, unknown>, bids: { id: string; amount: number }[]) =>
      ({
        source: 'bringatrailer',
        source_auction_id: key,
        observed_at: new Date().toISOString(),
        auction: {
          url: `https://bringatrailer.com/listing/${key}`, title: '1973 Porsche 911 Carrera RS', status: 'active', price: 500_000,
          currency: 'USD', year: 1973, make: 'Porsche', model: '911', auction_end_at: '2030-06-01T19:00:00',
          auction_end_date: '2030-06-01', bid_count: bids.length, sale_type: 'auction', price_type: 'bid', ...auction,
        },
        bids: bids.map((b) => ({ source_bid_id: b.id, bidder_name: 'rs_fan', amount: b.amount, currency: 'USD', bid_at: '2026-11-20T10:00:00' })),
      }) as unknown as Observation;

    it('verifies each delivery of a test and of real events, typed; refuses a tampered body and a stale timestamp', async () => {
      const owner = await createTestAccount(db, { plan: '100k' });
      const client = clientFor(owner.apiKey);
      const { data: hook, secret } = await client.webhooks.create({
        url: receiver.url('/events'),
        event_types: ['auction.created', 'auction.updated', 'auction.ended', 'bid.created'],
      });
      const test = await client.webhooks.sendTest(hook.id);
      const key = `client-${Date.now()}`;
      await processor.process(observation(key, {}, [{ id: `${key}-1`, amount: 500_000 }]));
      await processor.process(observation(key, { price: 510_000 }, [{ id: `${key}-1`, amount: 500_000 }]));
      await processor.process(observation(key, { status: 'sold', price: 520_000 }, [{ id: `${key}-1`, amount: 500_000 }]));

      const requests = await waitFor('five deliveries', async () => requestsTo('/events').length >= 5 && requestsTo('/events'));
      const events: WebhookEvent[] = requests.map((r) => verifyWebhook(r.body, r.headers, secret));
      expect(events.map((e) => e.type).sort()).toEqual(['auction.created', 'auction.ended', 'auction.updated', 'bid.created', 'webhook.test']);
      for (const event of events) {
        expect(event.api_version).toBe('2026-10-17');
        switch (event.type) {
          case 'webhook.test':
            expect(event.id).toBe(test.data.event_id);
            expect(event.data.message).toMatch(/test event/);
            break;
          case 'auction.created':
            expect(event.data.auction).toMatchObject({ source: 'bringatrailer', make: 'Porsche', price: 500_000, status: 'active' });
            expect(event.data.changes).toEqual({});
            break;
          case 'auction.updated':
            expect(event.data.changes.price).toEqual({ before: 500_000, after: 510_000 });
            break;
          case 'auction.ended':
            expect(event.data.changes.status).toEqual({ before: 'active', after: 'sold' });
            expect(event.data.auction.price).toBe(520_000);
            break;
          case 'bid.created':
            expect(event.data.bid).toMatchObject({ amount: 500_000, currency: 'USD', auction_id: events.find((e) => e.type === 'auction.created')!.data.auction.id });
            break;
        }
      }

      // The same bytes, one changed: refused. The same body re-signed 10 minutes ago: refused.
      const [sample] = requests;
      const refused = (body: string, headers: ReceivedRequest['headers']) => {
        try {
          verifyWebhook(body, headers, secret);
        } catch (error) {
          if (error instanceof WebhookVerificationError) return error.reason;
          throw error;
        }
        return 'verified';
      };
      expect(refused(sample.body.replace('"api_version":"2026-10-17"', '"api_version":"2026-10-18"'), sample.headers)).toBe('invalid_signature');
      const stale = new Date(Date.now() - 10 * 60_000);
      const staleHeaders = {
        ...sample.headers,
        'webhook-timestamp': String(Math.floor(stale.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign(sample.headers['webhook-id'], stale, sample.body),
      };
      expect(refused(sample.body, staleHeaders)).toBe('timestamp_too_old');
      expect(refused(sample.body, { ...sample.headers, 'webhook-id': 'evt_forged' })).toBe('invalid_signature');
      expect(refused(sample.body, sample.headers)).toBe('verified');

      // After a rotation every delivery is signed with both secrets: either one verifies.
      const { data: rotated } = await client.webhooks.rotateSecret(hook.id);
      // A new bid, nothing else changed (bid_count as before): one bid.created.
      await processor.process(
        observation(key, { status: 'sold', price: 520_000, bid_count: 1 }, [{ id: `${key}-1`, amount: 500_000 }, { id: `${key}-2`, amount: 505_000 }]),
      );
      const [afterRotation] = await waitFor('the delivery after rotation', async () => requestsTo('/events').length >= 6 && requestsTo('/events').slice(5));
      expect(afterRotation.headers['webhook-signature'].split(' ')).toHaveLength(2);
      const withNew = verifyWebhook(afterRotation.body, afterRotation.headers, rotated.secret);
      expect(verifyWebhook(afterRotation.body, afterRotation.headers, secret)).toEqual(withNew);
      expect(withNew.type).toBe('bid.created');
      await client.webhooks.update(hook.id, { enabled: false });
    });

    it('retries a failed delivery and recovers the failures of an outage', async () => {
      const owner = await createTestAccount(db, { plan: '100k' });
      const client = clientFor(owner.apiKey);
      let up = false;
      receiver.answer = (request) => (request.path === '/down' && !up ? { status: 500, body: 'down' } : { status: 200, body: 'ok' });
      const { data: hook } = await client.webhooks.create({ url: receiver.url('/down'), event_types: ['auction.created'] });
      await processor.process(observation(`client-down-a-${Date.now()}`, {}, []));
      await processor.process(observation(`client-down-b-${Date.now()}`, {}, []));
      const failed = await waitFor('two failed deliveries', async () => {
        const { data } = await client.webhooks.deliveries(hook.id);
        return data.length === 2 && data.every((d) => d.status === 'failed') && data;
      });
      expect(failed[0]).toMatchObject({ attempts: 6, last_error: 'http_status', last_response_status: 500 });
      expect(failed[0].payload.type).toBe('auction.created');

      up = true;
      const retried = await client.webhooks.retryDelivery(hook.id, failed[0].id);
      expect(retried.data).toMatchObject({ id: failed[0].id, max_attempts: 12 });
      await waitFor('the retried delivery', async () => (await client.webhooks.deliveries(hook.id)).data.find((d) => d.id === failed[0].id && d.status === 'succeeded'));
      expect(await caught(client.webhooks.retryDelivery(hook.id, failed[0].id))).toBeInstanceOf(ConflictError);

      const recovered = await client.webhooks.recover(hook.id, { since: new Date(Date.now() - 3_600_000).toISOString() });
      expect(recovered.data.recovered).toBe(1);
      await waitFor('the recovered delivery', async () => (await client.webhooks.deliveries(hook.id)).data.every((d) => d.status === 'succeeded'));
      const invalid = await caught(client.webhooks.recover(hook.id, { since: 'yesterday' }));
      expect(invalid).toBeInstanceOf(ValidationError);
      expect(invalid.details).toHaveProperty('since');
      await client.webhooks.update(hook.id, { enabled: false });
    });
  });
});
