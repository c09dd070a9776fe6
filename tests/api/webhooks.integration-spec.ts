import { randomUUID } from 'node:crypto';
import { setPlan } from '@cars/accounts';
import { pgPoolOf } from '@cars/persistence';
import { SecretCipher } from '@cars/signing';
import { openTestDataSource } from '@cars/testing';
import { DataSource } from 'typeorm';
import { caseResolver, HOSTILE_DESTINATIONS, PUBLIC_DESTINATIONS } from '@cars/net-guard/testing';
import { createTestAccount, settledUsage, TestAccount } from './support/accounts';
import { startTestGateway, startTestStack, TestStack, testWebhooksModule } from './support/stack';
import { WebhooksApi } from './support/webhooks-api';
import { request } from './support/http';
import { Queues } from '@cars/contracts';

jest.setTimeout(60_000);

/** The contract's fields, and `health` (additive). */
const SPEC_FIELDS = ['created_at', 'description', 'enabled', 'event_types', 'filters', 'health', 'id', 'updated_at', 'url'];
const DELIVERY_FIELDS = [
  'attempts', 'created_at', 'event_id', 'event_type', 'id', 'last_attempt_at', 'last_duration_ms', 'last_error',
  'last_response_excerpt', 'last_response_status', 'max_attempts', 'next_attempt_at', 'payload', 'status', 'updated_at',
  'waiting_reason',
].sort();
const HOOK = 'https://hooks.example.com/cars';
const resolver = caseResolver([
  ...HOSTILE_DESTINATIONS,
  ...PUBLIC_DESTINATIONS,
  { url: HOOK, resolvesTo: ['93.184.215.14'], why: 'the specs’ receiver' },
]);

/**
 * Every management rule of docs/api/webhooks.md, through the gateway, over RabbitMQ and the
 * run's database. Every answer is checked against /openapi.json (WebhooksApi).
 */
describe('webhook management through the gateway', () => {
  let stack: TestStack;
  let db: DataSource;
  let api: WebhooksApi;
  const uuid = (id: string) => id.replace(/^wh[ed]_/, '');

  const create = async (account: TestAccount, body: Record<string, unknown> = {}) => {
    const res = await api.post(account.apiKey, '/webhooks', { url: HOOK, event_types: ['auction.ended'], ...body });
    expect({ status: res.status, body: res.body }).toMatchObject({ status: 201 });
    return res.body as { data: { id: string } & Record<string, unknown>; secret: string };
  };
  /** A plan change is announced: the webhooks service pauses what it no longer allows soon after, not in the same transaction. */
  const downgrade = async (accountId: string, plan: '1k' | 'free', pausedIds: readonly string[]): Promise<void> => {
    await setPlan(pgPoolOf(db), { accountId, plan });
    const deadline = Date.now() + 10_000;
    let enabled: { enabled: boolean }[] = [];
    while (Date.now() < deadline) {
      enabled = await db.query(`SELECT enabled FROM webhook_subscriptions WHERE id = ANY($1::uuid[]) AND enabled`, [pausedIds.map(uuid)]);
      if (enabled.length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect({ stillEnabled: enabled.length }).toEqual({ stillEnabled: 0 });
  };
  const boundaryOf = async (id: string): Promise<Date> =>
    (await db.query(`SELECT active_since FROM webhook_subscriptions WHERE id = $1`, [uuid(id)]))[0].active_since;
  const insertDelivery = async (
    hookId: string,
    accountId: string,
    fields: { status: string; attempts?: number; created_at?: string },
  ): Promise<string> => {
    const [row] = await db.query(
      `INSERT INTO webhook_deliveries (subscription_id, account_id, event_id, event_type, status, attempts, payload, created_at, last_error)
       VALUES ($1, $2, $3, 'auction.ended', $4, $5, $6, coalesce($7::timestamptz, now()), CASE WHEN $5 > 0 THEN 'http_status' END)
       RETURNING id`,
      [
        uuid(hookId),
        accountId,
        `evt_${randomUUID()}`,
        fields.status,
        fields.attempts ?? 0,
        JSON.stringify({ id: 'evt_x', type: 'auction.ended', api_version: '2026-10-17', created_at: '2026-11-25T00:00:00.000Z', data: {} }),
        fields.created_at ?? null,
      ],
    );
    return `whd_${row.id}`;
  };

  beforeAll(async () => {
    db = await openTestDataSource();
    stack = await startTestStack({
      services: [{ queue: Queues.WebhooksRpc, module: testWebhooksModule({ resolver, planSweepIntervalMs: 200 }) }],
      access: { burstCapacity: 100_000, burstRatePerSecond: 100_000 },
    });
    api = await WebhooksApi.open(stack.url);
  });

  afterAll(async () => {
    await stack?.close();
    await db?.destroy();
  });

  describe('create, list, retrieve', () => {
    it('creates a subscription with the contract\'s fields and returns the secret once', async () => {
      const account = await createTestAccount(db, { plan: '10k' });
      const before = new Date((await db.query(`SELECT now() AS now`))[0].now);
      const res = await api.post(account.apiKey, '/webhooks', { url: HOOK, event_types: ['auction.ended', 'bid.created'] });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual(['data', 'secret']);
      expect(Object.keys(res.body.data).sort()).toEqual(SPEC_FIELDS);
      expect(res.body.data).toMatchObject({
        id: expect.stringMatching(/^whe_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
        url: HOOK,
        description: '',
        event_types: ['auction.ended', 'bid.created'],
        filters: {},
        enabled: true,
        health: { consecutive_failures: 0, last_success_at: null, last_failure_at: null, pending_deliveries: 0, oldest_pending_at: null },
      });
      expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(res.body.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
      // A new subscription receives future observations only: its boundary is the database clock at creation.
      expect((await boundaryOf(res.body.data.id)).getTime()).toBeGreaterThanOrEqual(before.getTime());

      const got = await api.get(account.apiKey, `/webhooks/${res.body.data.id}`);
      expect(got.status).toBe(200);
      expect(got.body).toEqual({ data: res.body.data });
    });

    it('stores the secret only encrypted, under the key id of WEBHOOK_SECRET_KEY', async () => {
      const account = await createTestAccount(db, { plan: '10k' });
      const { data, secret } = await create(account);
      const [row] = await db.query(`SELECT * FROM webhook_subscriptions WHERE id = $1`, [uuid(data.id)]);
      expect(JSON.stringify(row)).not.toContain(secret.slice('whsec_'.length));
      const cipher = SecretCipher.fromEnv(process.env.WEBHOOK_SECRET_KEY);
      expect(row.secret_key_id).toBe(cipher.currentKeyId);
      expect(cipher.decrypt(row.secret_ciphertext, row.secret_key_id)).toBe(secret);
    });

    it('lists newest first with page/limit paging, and only the account’s own', async () => {
      const account = await createTestAccount(db, { plan: '100k' });
      const other = await createTestAccount(db, { plan: '100k' });
      await create(other);
      const ids: string[] = [];
      for (let i = 0; i < 3; i += 1) ids.push((await create(account, { description: `hook ${i}` })).data.id);
      const all = await api.get(account.apiKey, '/webhooks');
      expect(all.status).toBe(200);
      expect(all.body.data.map((s: { id: string }) => s.id)).toEqual([...ids].reverse());
      expect(all.body.meta).toEqual({ total: 3, page: 1, limit: 50, total_pages: 1 });
      const second = await api.get(account.apiKey, '/webhooks?page=2&limit=2');
      expect(second.body.data.map((s: { id: string }) => s.id)).toEqual([ids[0]]);
      expect(second.body.meta).toEqual({ total: 3, page: 2, limit: 2, total_pages: 2 });
      const bad = await api.get(account.apiKey, '/webhooks?limit=0&colour=red');
      expect(bad.status).toBe(400);
      expect(Object.keys(bad.body.details).sort()).toEqual(['colour', 'limit']);
    });

    it('answers 404 for another account’s webhook, an unknown id and a malformed id, on every route', async () => {
      const owner = await createTestAccount(db, { plan: '10k' });
      const stranger = await createTestAccount(db, { plan: '10k' });
      const { data } = await create(owner);
      const deliveryId = await insertDelivery(data.id, owner.accountId, { status: 'failed', attempts: 6 });
      for (const id of [data.id, `whe_${randomUUID()}`, 'whe_nope', 'abc', data.id.toUpperCase()]) {
        const answers = [
          await api.get(stranger.apiKey, `/webhooks/${id}`),
          await api.patch(stranger.apiKey, `/webhooks/${id}`, { description: 'x' }),
          await api.delete(stranger.apiKey, `/webhooks/${id}`),
          await api.post(stranger.apiKey, `/webhooks/${id}/test`),
          await api.post(stranger.apiKey, `/webhooks/${id}/secret/rotate`),
          await api.get(stranger.apiKey, `/webhooks/${id}/deliveries`),
          await api.post(stranger.apiKey, `/webhooks/${id}/deliveries/${deliveryId}/retry`),
        ];
        expect({ id, statuses: answers.map((a) => a.status) }).toEqual({ id, statuses: [404, 404, 404, 404, 404, 404, 404] });
        expect(answers[0].body).toEqual({ error: 'Not Found', message: `No webhook with id ${id}` });
      }
      // The owner with a delivery id of another endpoint, or a malformed one: 404 too.
      const { data: sibling } = await create(await createTestAccount(db, { plan: '10k' }));
      const foreign = await insertDelivery(sibling.id, owner.accountId, { status: 'failed', attempts: 6 });
      for (const d of [foreign, `whd_${randomUUID()}`, 'whd_1', 'x']) {
        expect((await api.post(owner.apiKey, `/webhooks/${data.id}/deliveries/${d}/retry`)).status).toBe(404);
      }
      // Nothing was touched.
      expect((await api.get(owner.apiKey, `/webhooks/${data.id}`)).body.data.description).toBe('');
    });
  });

  describe('400 Validation Error with details', () => {
    it.each([
      ['an unknown field', { url: HOOK, event_types: ['bid.created'], colour: 'red' }, ['colour']],
      ['no event_types', { url: HOOK }, ['event_types']],
      ['empty event_types', { url: HOOK, event_types: [] }, ['event_types']],
      ['a duplicate event type', { url: HOOK, event_types: ['bid.created', 'bid.created'] }, ['event_types']],
      ['an unsupported event type', { url: HOOK, event_types: ['auction.deleted'] }, ['event_types']],
      ['webhook.test', { url: HOOK, event_types: ['webhook.test'] }, ['event_types']],
      ['a model filter', { url: HOOK, event_types: ['bid.created'], filters: { model: '911' } }, ['filters.model']],
      ['auction_id as a number', { url: HOOK, event_types: ['bid.created'], filters: { auction_id: 7 } }, ['filters.auction_id']],
      ['auction_id "-3"', { url: HOOK, event_types: ['bid.created'], filters: { auction_id: '-3' } }, ['filters.auction_id']],
      ['an empty make', { url: HOOK, event_types: ['bid.created'], filters: { make: '' } }, ['filters.make']],
      ['an unknown source', { url: HOOK, event_types: ['bid.created'], filters: { source: 'ebay' } }, ['filters.source']],
      ['filters as a list', { url: HOOK, event_types: ['bid.created'], filters: [] }, ['filters']],
      ['no url', { event_types: ['bid.created'] }, ['url']],
      ['a malformed url', { url: 'hooks example com', event_types: ['bid.created'] }, ['url']],
      ['a url of the wrong type', { url: ['https://a.example'], event_types: ['bid.created'] }, ['url']],
      ['a description of the wrong type', { url: HOOK, event_types: ['bid.created'], description: 5 }, ['description']],
      ['a NUL in the description', { url: HOOK, event_types: ['bid.created'], description: 'a\u0000b' }, ['description']],
      ['an array body', [HOOK], ['body']],
      ['a string body', 'hello', ['body']],
      ['a null body', null, ['body']],
    ])('POST refuses %s', async (_case, body, members) => {
      const account = await createTestAccount(db, { plan: '10k' });
      const res = await api.post(account.apiKey, '/webhooks', body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('Validation Error');
      expect(Object.keys(res.body.details).sort()).toEqual(members);
      expect((await db.query(`SELECT count(*)::int AS n FROM webhook_subscriptions WHERE account_id = $1`, [account.accountId]))[0].n).toBe(0);
    });

    it('takes an empty JSON body as no body on routes without one', async () => {
      const account = await createTestAccount(db, { plan: '10k' });
      const { data } = await create(account);
      const res = await api.call(account.apiKey, 'POST', `/webhooks/${data.id}/test`, undefined, '');
      expect(res.status).toBe(202);
      const create400 = await api.call(account.apiKey, 'POST', '/webhooks', undefined, '');
      expect(create400.status).toBe(400);
      expect(create400.body.details).toEqual({ body: ['the body must be a JSON object'] });
    });

    it('answers a body that is not JSON with 415 in the error envelope', async () => {
      const account = await createTestAccount(db, { plan: '10k' });
      const res = await request(`${stack.url}/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'url=https%3A%2F%2Fexample.com%2Fhook&event_types=auction.ended',
      });
      expect({ status: res.status, error: res.body.error }).toEqual({ status: 415, error: 'Unsupported Media Type' });
      expect(res.body.message).toMatch(/application\/json/);
    });

    it('refuses a body that is not JSON, and a PATCH with bad members, naming them', async () => {
      const account = await createTestAccount(db, { plan: '10k' });
      const broken = await api.call(account.apiKey, 'POST', '/webhooks', undefined, '{"url": ');
      expect(broken.status).toBe(400);
      expect(broken.body.error).toBe('Validation Error');
      expect(broken.body.details.body).toHaveLength(1);
      const { data } = await create(account);
      const res = await api.patch(account.apiKey, `/webhooks/${data.id}`, { enabled: 'yes', event_types: [], id: 'whe_x' });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.details).sort()).toEqual(['enabled', 'event_types', 'id']);
    });
  });

  describe('destinations (public HTTPS on port 443)', () => {
    it(`rejects ${HOSTILE_DESTINATIONS.length} hostile destinations through POST and PATCH, and accepts public ones`, async () => {
      const account = await createTestAccount(db, { plan: '100k' });
      const { data } = await create(account);
      const accepted: string[] = [];
      for (const hostile of HOSTILE_DESTINATIONS) {
        const created = await api.post(account.apiKey, '/webhooks', { url: hostile.url, event_types: ['bid.created'] });
        const patched = await api.patch(account.apiKey, `/webhooks/${data.id}`, { url: hostile.url });
        for (const res of [created, patched]) {
          if (res.status !== 400 || !res.body.details?.url?.[0]) accepted.push(`${hostile.url} (${hostile.why}): ${res.status}`);
        }
      }
      expect(accepted).toEqual([]);
      // A local receiver's URL: the refusal names the switch that allows it, the default stays strict.
      const local = await api.post(account.apiKey, '/webhooks', { url: 'http://127.0.0.1:8080/webhooks', event_types: ['bid.created'] });
      expect(local.status).toBe(400);
      expect(local.body.details.url[0]).toMatch(/^url must use https\. .*WEBHOOK_ALLOW_PRIVATE_DESTINATIONS=true/);
      const credentials = await api.post(account.apiKey, '/webhooks', { url: 'https://u:p@example.com/', event_types: ['bid.created'] });
      expect(credentials.body.details.url[0]).not.toContain('WEBHOOK_ALLOW_PRIVATE_DESTINATIONS');
      expect((await api.get(account.apiKey, `/webhooks/${data.id}`)).body.data.url).toBe(HOOK);
      for (const destination of PUBLIC_DESTINATIONS) {
        const created = await api.post(account.apiKey, '/webhooks', { url: destination.url, event_types: ['bid.created'] });
        expect({ url: destination.url, status: created.status }).toEqual({ url: destination.url, status: 201 });
        const patched = await api.patch(account.apiKey, `/webhooks/${data.id}`, { url: destination.url });
        expect({ url: destination.url, status: patched.status }).toEqual({ url: destination.url, status: 200 });
      }
    });

    it('accepts a name that does not resolve now (the worker fails it as dns_error)', async () => {
      const account = await createTestAccount(db, { plan: '10k' });
      const res = await api.post(account.apiKey, '/webhooks', { url: 'https://not-yet.example.invalid/hook', event_types: ['bid.created'] });
      expect(res.status).toBe(201);
    });
  });

  describe('account requirements (verified email, paid plan)', () => {
    it('refuses create, edit, resume, rotate, test and retry without an active paid plan or a verified email, saying which', async () => {
      const paid = await createTestAccount(db, { plan: '10k' });
      const { data } = await create(paid);
      const deliveryId = await insertDelivery(data.id, paid.accountId, { status: 'failed', attempts: 6 });
      await api.patch(paid.apiKey, `/webhooks/${data.id}`, { enabled: false });
      const attempts = (key: string) => [
        api.post(key, '/webhooks', { url: HOOK, event_types: ['bid.created'] }),
        api.patch(key, `/webhooks/${data.id}`, { description: 'edited' }),
        api.patch(key, `/webhooks/${data.id}`, { enabled: true }),
        api.post(key, `/webhooks/${data.id}/secret/rotate`),
        api.post(key, `/webhooks/${data.id}/test`),
        api.post(key, `/webhooks/${data.id}/deliveries/${deliveryId}/retry`),
      ];
      // Account changes reach the gateway by broadcast (NOTIFY at commit): wait until it has heard.
      const after = async (change: string, says: string) => {
        await db.query(change, [paid.accountId]);
        const deadline = Date.now() + 5000;
        while (!(await attempts(paid.apiKey)[0]).body.message?.includes(says) && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        for (const res of await Promise.all(attempts(paid.apiKey))) {
          expect(res.status).toBe(403);
          expect(res.body.error).toBe('Forbidden');
          expect(res.body.message).toContain(says);
        }
      };
      await after(`UPDATE accounts SET email_verified = false WHERE id = $1`, 'requires a verified email address');
      await after(
        `UPDATE accounts SET email_verified = true, plan = 'free' WHERE id = $1`,
        'requires an active paid plan (1K, 10K or 100K); this account is on the Free plan',
      );
      await after(
        `UPDATE accounts SET plan = '1k', plan_expires_at = now() - interval '1 day' WHERE id = $1`,
        'the 1K plan of this account expired on',
      );
      // Nothing changed.
      const [row] = await db.query(`SELECT description, enabled FROM webhook_subscriptions WHERE id = $1`, [uuid(data.id)]);
      expect(row).toEqual({ description: '', enabled: false });
    });

    it('keeps list, retrieve, deliveries, pause and delete open after a downgrade', async () => {
      const account = await createTestAccount(db, { plan: '10k' });
      const { data } = await create(account);
      await downgrade(account.accountId, 'free', [data.id]);
      await db.query(`UPDATE webhook_subscriptions SET enabled = true WHERE id = $1`, [uuid(data.id)]);
      expect((await api.get(account.apiKey, '/webhooks')).status).toBe(200);
      expect((await api.get(account.apiKey, `/webhooks/${data.id}`)).status).toBe(200);
      expect((await api.get(account.apiKey, `/webhooks/${data.id}/deliveries`)).status).toBe(200);
      const paused = await api.patch(account.apiKey, `/webhooks/${data.id}`, { enabled: false });
      expect(paused.status).toBe(200);
      expect(paused.body.data.enabled).toBe(false);
      expect((await api.delete(account.apiKey, `/webhooks/${data.id}`)).status).toBe(204);
    });

    it('does not count management calls, and they work with an exhausted allowance', async () => {
      const account = await createTestAccount(db, { plan: '1k', used: 1000 });
      const { data } = await create(account);
      expect((await api.get(account.apiKey, '/webhooks')).status).toBe(200);
      expect((await api.patch(account.apiKey, `/webhooks/${data.id}`, { description: 'still here' })).status).toBe(200);
      expect((await api.post(account.apiKey, `/webhooks/${data.id}/test`)).status).toBe(202);
      const res = await api.get(account.apiKey, `/webhooks/${data.id}/deliveries`);
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
      expect(await settledUsage(db, account.accountId)).toEqual({ used: 1000, reserved: 0 });
    });

    it('still applies the burst limit', async () => {
      const account = await createTestAccount(db, { plan: '10k' });
      const tight = await startTestGateway({ access: { burstCapacity: 2, burstRatePerSecond: 0.01 } });
      try {
        const tightApi = await WebhooksApi.open(tight.url);
        const statuses = [];
        for (let i = 0; i < 3; i += 1) statuses.push((await tightApi.get(account.apiKey, '/webhooks')).status);
        expect(statuses).toEqual([200, 200, 429]);
      } finally {
        await tight.gateway.close();
      }
    });

    it('asks for the key on every route', async () => {
      const res = await api.get(null, '/webhooks');
      expect(res.status).toBe(401);
      expect((await api.post('cca_live_00000000000000000000000000000000', '/webhooks', {})).status).toBe(401);
    });
  });

  describe('endpoint allowance (409)', () => {
    it('allows 1 endpoint on 1K and 10 on 10K; paused endpoints count', async () => {
      const small = await createTestAccount(db, { plan: '1k' });
      const { data } = await create(small);
      await api.patch(small.apiKey, `/webhooks/${data.id}`, { enabled: false });
      const refused = await api.post(small.apiKey, '/webhooks', { url: HOOK, event_types: ['bid.created'] });
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual({
        error: 'Conflict',
        message: expect.stringContaining('the 1K plan allows 1 webhook endpoint (paused endpoints count)'),
      });
      const medium = await createTestAccount(db, { plan: '10k' });
      for (let i = 0; i < 10; i += 1) await create(medium);
      expect((await api.post(medium.apiKey, '/webhooks', { url: HOOK, event_types: ['bid.created'] })).status).toBe(409);
      const large = await createTestAccount(db, { plan: '100k' });
      for (let i = 0; i < 12; i += 1) await create(large);
    });

    it('holds under concurrent creates', async () => {
      const account = await createTestAccount(db, { plan: '1k' });
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => api.post(account.apiKey, '/webhooks', { url: HOOK, event_types: ['bid.created'] })),
      );
      expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    });
  });

  describe('PATCH (only the fields supplied) and activation boundaries', () => {
    it('applies only the members supplied; filters replace, {} clears', async () => {
      const account = await createTestAccount(db, { plan: '10k' });
      const { data } = await create(account, { description: 'first', filters: { make: 'Porsche', source: 'bringatrailer' } });
      const res = await api.patch(account.apiKey, `/webhooks/${data.id}`, { filters: { auction_id: '42' } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ description: 'first', url: HOOK, event_types: ['auction.ended'], filters: { auction_id: '42' } });
      expect(Date.parse(res.body.data.updated_at)).toBeGreaterThan(Date.parse(data.created_at as string));
      const cleared = await api.patch(account.apiKey, `/webhooks/${data.id}`, { filters: {} });
      expect(cleared.body.data.filters).toEqual({});
    });

    it('moves the boundary for a new URL, another set of event types or other filter behaviour — not for the rest', async () => {
      const account = await createTestAccount(db, { plan: '10k' });
      const { data } = await create(account, {
        event_types: ['auction.ended', 'bid.created'],
        filters: { make: 'Porsche', source: 'bringatrailer', auction_id: '7' },
      });
      const cases: [string, Record<string, unknown>, boolean][] = [
        ['a description edit', { description: 'renamed' }, false],
        ['reordered event types', { event_types: ['bid.created', 'auction.ended'] }, false],
        ['recapitalized make and source', { filters: { make: 'PORSCHE', source: 'BringATrailer', auction_id: '7' } }, false],
        ['the same URL again', { url: HOOK }, false],
        ['another URL', { url: 'https://example.com/hook' }, true],
        ['another set of event types', { event_types: ['bid.created'] }, true],
        ['another make', { filters: { make: 'Ferrari', source: 'bringatrailer', auction_id: '7' } }, true],
        ['another auction_id', { filters: { make: 'Ferrari', source: 'bringatrailer', auction_id: '8' } }, true],
        ['a filter removed', { filters: { make: 'Ferrari', source: 'bringatrailer' } }, true],
      ];
      for (const [what, body, moves] of cases) {
        const before = await boundaryOf(data.id);
        const res = await api.patch(account.apiKey, `/webhooks/${data.id}`, body);
        expect({ what, status: res.status }).toEqual({ what, status: 200 });
        const after = await boundaryOf(data.id);
        const [{ now }] = await db.query(`SELECT now() AS now`);
        expect({ what, moved: after.getTime() !== before.getTime() }).toEqual({ what, moved: moves });
        if (moves) expect(after.getTime()).toBeLessThanOrEqual(new Date(now).getTime());
      }
    });
  });

  describe('pause and resume', () => {
    it('pausing cancels every pending delivery at once; an attempt in flight is left to finish', async () => {
      const account = await createTestAccount(db, { plan: '10k' });
      const { data } = await create(account);
      const pending = await insertDelivery(data.id, account.accountId, { status: 'pending' });
      const retrying = await insertDelivery(data.id, account.accountId, { status: 'pending', attempts: 2 });
      const sending = await insertDelivery(data.id, account.accountId, { status: 'sending', attempts: 1 });
      const done = await insertDelivery(data.id, account.accountId, { status: 'succeeded', attempts: 1 });
      expect((await api.get(account.apiKey, `/webhooks/${data.id}`)).body.data.health).toMatchObject({ pending_deliveries: 3 });
      const res = await api.patch(account.apiKey, `/webhooks/${data.id}`, { enabled: false });
      expect(res.body.data.enabled).toBe(false);
      // The attempt in flight is still open; the canceled ones are not.
      expect(res.body.data.health).toMatchObject({ pending_deliveries: 1 });
      const statuses = await db.query(`SELECT id, status FROM webhook_deliveries WHERE subscription_id = $1`, [uuid(data.id)]);
      const statusOf = (id: string) => statuses.find((r: { id: string }) => r.id === uuid(id)).status;
      expect([pending, retrying, sending, done].map(statusOf)).toEqual(['canceled', 'canceled', 'sending', 'succeeded']);
    });

    it('resuming sets a new boundary and respects the endpoint allowance', async () => {
      const account = await createTestAccount(db, { plan: '10k' });
      const first = await create(account);
      const second = await create(account);
      await api.patch(account.apiKey, `/webhooks/${second.data.id}`, { enabled: false });
      const pausedAt = await boundaryOf(second.data.id);
      const resumed = await api.patch(account.apiKey, `/webhooks/${second.data.id}`, { enabled: true });
      expect(resumed.body.data.enabled).toBe(true);
      expect((await boundaryOf(second.data.id)).getTime()).toBeGreaterThan(pausedAt.getTime());

      await downgrade(account.accountId, '1k', [second.data.id]);
      const refused = await api.patch(account.apiKey, `/webhooks/${second.data.id}`, { enabled: true });
      expect(refused.status).toBe(409);
      expect(refused.body.message).toContain('the 1K plan allows 1 webhook endpoint');
      await api.patch(account.apiKey, `/webhooks/${first.data.id}`, { enabled: false });
      expect((await api.patch(account.apiKey, `/webhooks/${second.data.id}`, { enabled: true })).status).toBe(200);
    });
  });

  describe('plan downgrade and expiry', () => {
    it('a downgrade keeps the oldest active endpoints, pauses the rest and cancels their pending work; upgrading resumes nothing', async () => {
      const account = await createTestAccount(db, { plan: '100k' });
      const ids: string[] = [];
      for (let i = 0; i < 4; i += 1) ids.push((await create(account)).data.id);
      await api.patch(account.apiKey, `/webhooks/${ids[0]}`, { enabled: false });
      const queued = await insertDelivery(ids[3], account.accountId, { status: 'pending' });
      await downgrade(account.accountId, '1k', [ids[3], ids[2]]);
      const enabled = async () =>
        (await api.get(account.apiKey, '/webhooks')).body.data.map((s: { id: string; enabled: boolean }) => [s.id, s.enabled]);
      // The oldest *active* one (ids[1]) is kept; ids[0] was paused already.
      expect(await enabled()).toEqual([[ids[3], false], [ids[2], false], [ids[1], true], [ids[0], false]]);
      expect((await db.query(`SELECT status FROM webhook_deliveries WHERE id = $1`, [uuid(queued)]))[0].status).toBe('canceled');
      await setPlan(pgPoolOf(db), { accountId: account.accountId, plan: '100k' });
      expect(await enabled()).toEqual([[ids[3], false], [ids[2], false], [ids[1], true], [ids[0], false]]);
      await downgrade(account.accountId, 'free', [ids[1]]);
      expect((await enabled()).map(([, on]: [string, boolean]) => on)).toEqual([false, false, false, false]);
    });

    it('an expired plan pauses every endpoint without operator action', async () => {
      const account = await createTestAccount(db, { plan: '10k' });
      const { data } = await create(account);
      const queued = await insertDelivery(data.id, account.accountId, { status: 'pending' });
      await db.query(`UPDATE accounts SET plan_expires_at = now() + interval '300 milliseconds' WHERE id = $1`, [account.accountId]);
      // The sweep (every 200 ms here) finds it; nobody calls the API.
      const deadline = Date.now() + 10_000;
      let row: { enabled: boolean } | undefined;
      while (Date.now() < deadline) {
        [row] = await db.query(`SELECT enabled FROM webhook_subscriptions WHERE id = $1`, [uuid(data.id)]);
        if (!row!.enabled) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(row).toEqual({ enabled: false });
      expect((await db.query(`SELECT status FROM webhook_deliveries WHERE id = $1`, [uuid(queued)]))[0].status).toBe('canceled');
    });
  });

  describe('test events', () => {
    it('queues a webhook.test delivery (the event envelope) and allows one per endpoint per minute', async () => {
      const account = await createTestAccount(db, { plan: '1k' });
      const { data } = await create(account);
      const res = await api.post(account.apiKey, `/webhooks/${data.id}/test`);
      expect(res.status).toBe(202);
      expect(Object.keys(res.body.data).sort()).toEqual(DELIVERY_FIELDS);
      const delivery = res.body.data;
      expect(delivery).toMatchObject({
        id: expect.stringMatching(/^whd_[0-9a-f-]{36}$/),
        event_type: 'webhook.test',
        status: 'pending',
        waiting_reason: null,
        attempts: 0,
        max_attempts: 6,
        last_error: null,
      });
      expect(delivery.payload).toEqual({
        id: delivery.event_id,
        type: 'webhook.test',
        api_version: '2026-10-17',
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        data: { message: 'This is a test event from the Classic Car Auction Data Service.' },
      });
      expect(delivery.event_id).toMatch(/^evt_[0-9a-f-]{36}$/);
      const again = await api.post(account.apiKey, `/webhooks/${data.id}/test`);
      expect(again.status).toBe(409);
      expect(again.body.message).toMatch(/one test per endpoint per minute: the next test can be sent in \d+ s/i);
      const wait = Number(again.headers.get('retry-after'));
      expect(wait).toBeGreaterThanOrEqual(59);
      expect(again.body.message).toContain(`in ${wait} s`);
      await db.query(`UPDATE webhook_subscriptions SET last_test_at = now() - interval '61 seconds' WHERE id = $1`, [uuid(data.id)]);
      expect((await api.post(account.apiKey, `/webhooks/${data.id}/test`)).status).toBe(202);
      const listed = await api.get(account.apiKey, `/webhooks/${data.id}/deliveries`);
      expect(listed.body.data.map((d: { event_type: string }) => d.event_type)).toEqual(['webhook.test', 'webhook.test']);
    });

    it('refuses a test to a paused endpoint', async () => {
      const account = await createTestAccount(db, { plan: '1k' });
      const { data } = await create(account);
      await api.patch(account.apiKey, `/webhooks/${data.id}`, { enabled: false });
      expect((await api.post(account.apiKey, `/webhooks/${data.id}/test`)).status).toBe(409);
    });
  });

  describe('deliveries and retry', () => {
    it('lists the 20 most recent, newest first, without capture metadata', async () => {
      const account = await createTestAccount(db, { plan: '10k' });
      const { data } = await create(account);
      const ids: string[] = [];
      for (let i = 0; i < 25; i += 1) {
        ids.push(await insertDelivery(data.id, account.accountId, { status: 'succeeded', attempts: 1, created_at: new Date(Date.UTC(2026, 10, 1, 0, i)).toISOString() }));
      }
      const res = await api.get(account.apiKey, `/webhooks/${data.id}/deliveries`);
      expect(res.status).toBe(200);
      expect(res.body.data.map((d: { id: string }) => d.id)).toEqual(ids.slice(5).reverse());
      expect(Object.keys(res.body.data[0]).sort()).toEqual(DELIVERY_FIELDS);
    });

    it.each([
      ['failed', 6, 202, 12],
      ['pending', 2, 202, 8],
      ['pending', 0, 409, null],
      ['succeeded', 1, 409, null],
      ['sending', 1, 409, null],
      ['canceled', 0, 409, null],
    ] as const)('a %s delivery after %d attempts: %d', async (status, attempts, expected, maxAttempts) => {
      const account = await createTestAccount(db, { plan: '10k' });
      const { data } = await create(account);
      const deliveryId = await insertDelivery(data.id, account.accountId, { status, attempts });
      const res = await api.post(account.apiKey, `/webhooks/${data.id}/deliveries/${deliveryId}/retry`);
      expect(res.status).toBe(expected);
      const [row] = await db.query(
        `SELECT status, max_attempts, next_attempt_at <= now() AS due, event_id, payload FROM webhook_deliveries WHERE id = $1`,
        [uuid(deliveryId)],
      );
      if (expected === 202) {
        expect(res.body.data).toMatchObject({ id: deliveryId, status: 'pending', attempts, max_attempts: maxAttempts });
        expect(row).toMatchObject({ status: 'pending', max_attempts: maxAttempts, due: true });
        expect(res.body.data.payload).toEqual(JSON.parse(row.payload));
      } else {
        expect(res.body.error).toBe('Conflict');
        expect(row.status).toBe(status);
      }
    });

    it('refuses to retry on a paused endpoint', async () => {
      const account = await createTestAccount(db, { plan: '10k' });
      const { data } = await create(account);
      const deliveryId = await insertDelivery(data.id, account.accountId, { status: 'failed', attempts: 6 });
      await api.patch(account.apiKey, `/webhooks/${data.id}`, { enabled: false });
      const res = await api.post(account.apiKey, `/webhooks/${data.id}/deliveries/${deliveryId}/retry`);
      expect(res.status).toBe(409);
      expect(res.body.message).toContain('paused');
    });
  });

  describe('rotation and delete', () => {
    it('rotates: a new secret once, the previous kept 24 h, rotating again replaces the kept one', async () => {
      const account = await createTestAccount(db, { plan: '10k' });
      const { data, secret: first } = await create(account);
      const cipher = SecretCipher.fromEnv(process.env.WEBHOOK_SECRET_KEY);
      const secretsOf = async () => {
        const [row] = await db.query(
          `SELECT secret_ciphertext, secret_key_id, previous_secret_ciphertext, previous_secret_key_id,
                  extract(epoch FROM previous_secret_expires_at - now()) AS overlap FROM webhook_subscriptions WHERE id = $1`,
          [uuid(data.id)],
        );
        return {
          current: cipher.decrypt(row.secret_ciphertext, row.secret_key_id),
          previous: row.previous_secret_ciphertext && cipher.decrypt(row.previous_secret_ciphertext, row.previous_secret_key_id),
          overlapHours: Number(row.overlap) / 3600,
        };
      };
      const rotated = await api.post(account.apiKey, `/webhooks/${data.id}/secret/rotate`);
      expect(rotated.status).toBe(200);
      expect(Object.keys(rotated.body)).toEqual(['data']);
      const second = rotated.body.data.secret;
      expect(second).toMatch(/^whsec_/);
      expect(second).not.toBe(first);
      let stored = await secretsOf();
      expect(stored).toMatchObject({ current: second, previous: first });
      expect(stored.overlapHours).toBeGreaterThan(23.99);
      expect(stored.overlapHours).toBeLessThanOrEqual(24);
      const third = (await api.post(account.apiKey, `/webhooks/${data.id}/secret/rotate`)).body.data.secret;
      stored = await secretsOf();
      expect(stored).toMatchObject({ current: third, previous: second });

      // No other body carries a secret.
      const bodies = JSON.stringify([
        await api.get(account.apiKey, '/webhooks'),
        await api.get(account.apiKey, `/webhooks/${data.id}`),
        await api.patch(account.apiKey, `/webhooks/${data.id}`, { description: 'x' }),
        await api.get(account.apiKey, `/webhooks/${data.id}/deliveries`),
      ].map((r) => r.body));
      for (const secret of [first, second, third]) expect(bodies).not.toContain(secret.slice(6));
      expect(bodies).not.toMatch(/whsec_|secret|ciphertext/);
    });

    it('deletes the subscription and its delivery history; 409 while an attempt is in flight', async () => {
      const account = await createTestAccount(db, { plan: '10k' });
      const { data } = await create(account);
      const sending = await insertDelivery(data.id, account.accountId, { status: 'sending', attempts: 1 });
      await insertDelivery(data.id, account.accountId, { status: 'failed', attempts: 6 });
      const busy = await api.delete(account.apiKey, `/webhooks/${data.id}`);
      expect(busy.status).toBe(409);
      expect(busy.body.message).toContain('in flight');
      expect(busy.headers.get('retry-after')).toBe('2');
      await db.query(`UPDATE webhook_deliveries SET status = 'succeeded' WHERE id = $1`, [uuid(sending)]);
      const res = await api.delete(account.apiKey, `/webhooks/${data.id}`);
      expect(res.status).toBe(204);
      expect(res.body).toBeUndefined();
      expect((await api.get(account.apiKey, `/webhooks/${data.id}`)).status).toBe(404);
      expect((await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1`, [uuid(data.id)]))[0].n).toBe(0);
    });
  });
});
