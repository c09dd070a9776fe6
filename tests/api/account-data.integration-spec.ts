import { randomUUID } from 'node:crypto';
import { setPlan, setUsedUnits } from '@cars/accounts';
import { Queues } from '@cars/contracts';
import { caseResolver, PUBLIC_DESTINATIONS } from '@cars/net-guard/testing';
import { QueryModule } from '@cars/service-query';
import { StatsModule } from '@cars/service-stats';
import { openTestDataSource } from '@cars/testing';
import { DataSource } from 'typeorm';
import { settledUsage } from './support/accounts';
import { accountAreaModule, ConsoleClient, OpenApiConformance } from './support/account-area';
import { bearer, request } from './support/http';
import { startTestStack, TestStack, testWebhooksModule } from './support/stack';
import { pgPoolOf } from '@cars/persistence';

jest.setTimeout(60_000);

const HOOK = 'https://hooks.example.com/console';
const resolver = caseResolver([...PUBLIC_DESTINATIONS, { url: HOOK, resolvesTo: ['93.184.215.14'], why: 'the specs’ receiver' }]);
const email = () => `data-${randomUUID()}@example.test`;

/**
 * What a signed-in console session can do besides sign-in: the overview, API keys, webhooks (the
 * `/webhooks` routes mounted under `/account`), the reference lists and `/account/stats` (paid,
 * metered like `/stats`). Every answer is checked against /openapi.json.
 */
describe('account area: overview, keys, webhooks, stats', () => {
  let stack: TestStack;
  let db: DataSource;
  let conformance: OpenApiConformance;

  /** A new console account signed in, with the given plan and verification (operator steps done in SQL). */
  const signedIn = async (options: { plan?: '1k' | '10k' | '100k'; verified?: boolean } = {}) => {
    const browser = new ConsoleClient(stack.url, conformance);
    const res = await browser.signUp(email());
    expect(res.status).toBe(201);
    const accountId: string = res.body.account.id;
    if (options.plan) await setPlan(pgPoolOf(db), { accountId, plan: options.plan });
    if (options.verified) await db.query(`UPDATE accounts SET email_verified = true WHERE id = $1`, [accountId]);
    return { browser, accountId };
  };

  beforeAll(async () => {
    db = await openTestDataSource();
    await db.query(`INSERT INTO makes (name) VALUES ('Porsche') ON CONFLICT DO NOTHING`);
    stack = await startTestStack({
      services: [
        { queue: Queues.QueryRpc, module: QueryModule },
        { queue: Queues.StatsRpc, module: StatsModule },
        { queue: Queues.WebhooksRpc, module: testWebhooksModule({ resolver }) },
      ],
      access: { burstCapacity: 100_000, burstRatePerSecond: 100_000 },
      gatewayImports: [accountAreaModule()],
    });
    conformance = await OpenApiConformance.load(stack.url);
  });

  afterAll(async () => {
    await stack?.close();
    await db?.destroy();
  });

  it('shows the overview: plan, billing period, usage split into requests and deliveries, reset time', async () => {
    const { browser, accountId } = await signedIn({ plan: '1k' });
    await db.query(
      `INSERT INTO usage_ledger (account_id, period, used, reserved, requests) VALUES ($1, date_trunc('month', now() AT TIME ZONE 'UTC')::date, 7, 0, 5)
       ON CONFLICT (account_id, period) DO UPDATE SET used = 7, requests = 5`,
      [accountId],
    );
    const res = await browser.get('/account/overview');
    expect(res.status).toBe(200);
    const now = new Date();
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    expect(res.body).toEqual({
      account: expect.objectContaining({ id: accountId, plan: '1k', email_verified: false }),
      plan: { id: '1k', name: '1K', monthly_allowance: 1000, paid: true, webhook_endpoints: 1, expired: false },
      billing_period: { start: start.toISOString(), end: end.toISOString() },
      usage: { used: 7, reserved: 0, allowance: 1000, remaining: 993, requests: 5, deliveries: 2, resets_at: end.toISOString(), daily: expect.any(Array) },
    });
    // Every day of the period so far, the charge (the ledger row written above) on today.
    const today = now.toISOString().slice(0, 10);
    expect(res.body.usage.daily).toHaveLength(now.getUTCDate());
    expect(res.body.usage.daily[0].date).toBe(start.toISOString().slice(0, 10));
    expect(res.body.usage.daily.at(-1)).toEqual({ date: today, requests: 5, deliveries: 2 });
    // A lapsed paid plan shows as Free.
    await db.query(`UPDATE accounts SET plan_expires_at = now() - interval '1 day' WHERE id = $1`, [accountId]);
    const lapsed = await browser.get('/account/overview');
    expect(lapsed.body.plan).toMatchObject({ id: 'free', expired: true, monthly_allowance: 100, paid: false });
    expect(lapsed.body.account.plan).toBe('1k');
  });

  describe('API keys', () => {
    it('creates a key shown once, lists it by prefix (never the key), and revoking it refuses it on /auctions', async () => {
      const { browser, accountId } = await signedIn();
      expect((await browser.get('/account/keys')).body).toEqual({ data: [] });

      const created = await browser.post('/account/keys');
      expect(created.status).toBe(201);
      expect(Object.keys(created.body).sort()).toEqual(['api_key', 'key']);
      const { key, api_key: apiKey } = created.body;
      expect(apiKey).toMatch(/^cca_live_[A-Za-z0-9]{32}$/);
      expect(key).toEqual({ id: expect.any(String), prefix: apiKey.slice(0, 16), created_at: expect.any(String), last_used_at: null, revoked_at: null });
      const [row] = await db.query(`SELECT * FROM api_keys WHERE id = $1`, [key.id]);
      expect(row.account_id).toBe(accountId);
      expect(JSON.stringify(row)).not.toContain(apiKey);

      // The key works on the data API (bearer), and its first use is recorded.
      expect((await request(`${stack.url}/auctions?limit=1`, bearer(apiKey))).status).toBe(200);
      const deadline = Date.now() + 5000;
      let listed = await browser.get('/account/keys');
      while (listed.body.data[0].last_used_at === null && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        listed = await browser.get('/account/keys');
      }
      expect(listed.body.data).toEqual([{ ...key, last_used_at: expect.any(String) }]);
      expect(JSON.stringify(listed.body)).not.toContain(apiKey);

      const second = await browser.post('/account/keys');
      expect((await browser.get('/account/keys')).body.data.map((k: { id: string }) => k.id)).toEqual([second.body.key.id, key.id]);

      const revoked = await browser.delete(`/account/keys/${key.id}`);
      expect(revoked.status).toBe(204);
      const refused = await request(`${stack.url}/auctions?limit=1`, bearer(apiKey));
      expect(refused.status).toBe(401);
      expect((await request(`${stack.url}/auctions?limit=1`, bearer(second.body.api_key))).status).toBe(200);
      const after = (await browser.get('/account/keys')).body.data.find((k: { id: string }) => k.id === key.id);
      expect(after.revoked_at).toEqual(expect.any(String));
      // Again: a no-op.
      expect((await browser.delete(`/account/keys/${key.id}`)).status).toBe(204);
    });

    it('answers 404 for another account’s key or an unknown id, and leaves the key alone', async () => {
      const owner = await signedIn();
      const other = await signedIn();
      const { body } = await owner.browser.post('/account/keys');
      for (const id of [body.key.id, randomUUID(), 'not-a-uuid']) {
        const res = await other.browser.delete(`/account/keys/${id}`);
        expect({ id, status: res.status, error: res.body.error }).toEqual({ id, status: 404, error: 'Not Found' });
      }
      expect((await request(`${stack.url}/auctions?limit=1`, bearer(body.api_key))).status).toBe(200);
      expect((await other.browser.get('/account/keys')).body.data).toEqual([]);
    });
  });

  describe('webhooks under /account', () => {
    it('creates, lists, retrieves, edits, tests, rotates and lists deliveries like /webhooks, on a paid plan', async () => {
      const { browser } = await signedIn({ plan: '10k', verified: true });
      const created = await browser.post('/account/webhooks', { url: HOOK, event_types: ['auction.ended'], filters: { make: 'Porsche' } });
      expect(created.status).toBe(201);
      expect(Object.keys(created.body).sort()).toEqual(['data', 'secret']);
      expect(created.body.secret).toMatch(/^whsec_/);
      const id: string = created.body.data.id;
      expect(created.body.data).toMatchObject({ url: HOOK, event_types: ['auction.ended'], filters: { make: 'Porsche' }, enabled: true });

      const list = await browser.get('/account/webhooks');
      expect(list.status).toBe(200);
      expect(list.body.data.map((w: { id: string }) => w.id)).toEqual([id]);
      expect(list.body.meta).toMatchObject({ total: 1 });
      expect((await browser.get(`/account/webhooks/${id}`)).body).toEqual({ data: created.body.data });

      const edited = await browser.patch(`/account/webhooks/${id}`, { description: 'console' });
      expect(edited.status).toBe(200);
      expect(edited.body.data.description).toBe('console');

      const test = await browser.post(`/account/webhooks/${id}/test`);
      expect(test.status).toBe(202);
      expect(test.body.data).toMatchObject({ event_type: 'webhook.test', status: 'pending' });
      const again = await browser.post(`/account/webhooks/${id}/test`);
      expect(again.status).toBe(409);

      const rotated = await browser.post(`/account/webhooks/${id}/secret/rotate`);
      expect(rotated.status).toBe(200);
      expect(rotated.body.data.secret).toMatch(/^whsec_/);
      expect(rotated.body.data.secret).not.toBe(created.body.secret);

      const deliveries = await browser.get(`/account/webhooks/${id}/deliveries`);
      expect(deliveries.status).toBe(200);
      expect(deliveries.body.data.map((d: { id: string }) => d.id)).toEqual([test.body.data.id]);

      const recovered = await browser.post(`/account/webhooks/${id}/recover`, { since: new Date(Date.now() - 3_600_000).toISOString() });
      expect(recovered.status).toBe(202);
      expect(recovered.body).toEqual({ data: { recovered: 0 } });

      const paused = await browser.patch(`/account/webhooks/${id}`, { enabled: false });
      expect(paused.body.data.enabled).toBe(false);
      expect((await browser.delete(`/account/webhooks/${id}`)).status).toBe(204);
      expect((await browser.get(`/account/webhooks/${id}`)).status).toBe(404);
    });

    it('answers exactly as /webhooks does with an API key of the same account (bodies, statuses, messages)', async () => {
      const { browser } = await signedIn({ plan: '1k', verified: true });
      const key = (await browser.post('/account/keys')).body.api_key as string;
      const viaKey = (method: string, path: string, body?: unknown) =>
        request(`${stack.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      const created = await browser.post('/account/webhooks', { url: HOOK, event_types: ['bid.created'] });
      const id = created.body.data.id as string;
      const cases: [string, string, unknown?][] = [
        ['GET', '/webhooks'],
        ['GET', `/webhooks/${id}`],
        ['GET', '/webhooks?limit=0'],
        ['GET', `/webhooks/whe_${randomUUID()}`],
        ['POST', '/webhooks', { url: HOOK, event_types: ['auction.ended'] }], // 1K: one endpoint → 409
        ['POST', '/webhooks', { url: 'http://hooks.example.com/x', event_types: [] }],
        ['PATCH', `/webhooks/${id}`, { nope: 1 }],
        ['GET', `/webhooks/${id}/deliveries`],
      ];
      for (const [method, path, body] of cases) {
        const mine = await browser.call(method, `/account${path}`, body);
        const theirs = await viaKey(method, path, body);
        expect({ method, path, status: mine.status, body: mine.body }).toEqual({ method, path, status: theirs.status, body: theirs.body });
      }
    });

    it('refuses the Free plan with the same message as /webhooks', async () => {
      const { browser } = await signedIn({ verified: true });
      const key = (await browser.post('/account/keys')).body.api_key as string;
      const body = { url: HOOK, event_types: ['auction.ended'] };
      const mine = await browser.post('/account/webhooks', body);
      expect(mine.status).toBe(403);
      expect(mine.body.error).toBe('Forbidden');
      expect(mine.body.message).toMatch(/paid plan/i);
      const theirs = await request(`${stack.url}/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(theirs).toMatchObject({ status: 403, body: mine.body });
      // Listing is allowed on any plan.
      expect((await browser.get('/account/webhooks')).status).toBe(200);
    });

    it('refuses an unverified email address on a paid plan, saying so', async () => {
      const { browser } = await signedIn({ plan: '10k' });
      const res = await browser.post('/account/webhooks', { url: HOOK, event_types: ['auction.ended'] });
      expect(res.status).toBe(403);
      expect(res.body.message).toMatch(/verif/i);
    });
  });

  describe('/account/stats', () => {
    it('is metered like /stats: one unit per request, counted as a request', async () => {
      const { browser, accountId } = await signedIn({ plan: '1k' });
      const before = await settledUsage(db, accountId);
      const res = await browser.get('/account/stats?make=Porsche');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(1000 - before.used - 1));
      const after = await settledUsage(db, accountId);
      expect(after.used).toBe(before.used + 1);
      const overview = await browser.get('/account/overview');
      expect(overview.body.usage).toMatchObject({ used: before.used + 1, requests: before.used + 1, deliveries: 0 });
      expect(overview.body.usage.daily.at(-1)).toEqual({ date: new Date().toISOString().slice(0, 10), requests: before.used + 1, deliveries: 0 });
      // A bad query is 400 and not counted (as /stats).
      expect((await browser.get('/account/stats')).status).toBe(400);
      expect((await settledUsage(db, accountId)).used).toBe(before.used + 1);
      // The reference lists are not counted.
      expect((await browser.get('/account/makes')).status).toBe(200);
      expect((await settledUsage(db, accountId)).used).toBe(before.used + 1);
    });

    it('answers 403 on the Free plan and 429 past the allowance, as /stats does', async () => {
      const free = await signedIn();
      const freeKey = (await free.browser.post('/account/keys')).body.api_key as string;
      const mine = await free.browser.get('/account/stats?make=Porsche');
      expect(mine.status).toBe(403);
      const theirs = await request(`${stack.url}/stats?make=Porsche`, bearer(freeKey));
      expect(theirs).toMatchObject({ status: 403, body: mine.body });

      const paid = await signedIn({ plan: '1k' });
      const paidKey = (await paid.browser.post('/account/keys')).body.api_key as string;
      await setUsedUnits(pgPoolOf(db), paid.accountId, 1000);
      const over = await paid.browser.get('/account/stats?make=Porsche');
      expect(over.status).toBe(429);
      expect(over.body.error).toBe('Rate Limit Exceeded');
      const overByKey = await request(`${stack.url}/stats?make=Porsche`, bearer(paidKey));
      expect(overByKey).toMatchObject({ status: 429, body: over.body });
      expect((await settledUsage(db, paid.accountId)).used).toBe(1000);
    });
  });

  it('lists makes, models of a make and the sources for the pickers', async () => {
    const { browser } = await signedIn();
    const makes = await browser.get('/account/makes');
    expect(makes.status).toBe(200);
    expect(makes.body.data).toContain('Porsche');
    const models = await browser.get('/account/models?make=Porsche');
    expect(models.status).toBe(200);
    expect(Array.isArray(models.body.data)).toBe(true);
    expect((await browser.get('/account/models')).status).toBe(400);
    const sources = await browser.get('/account/sources');
    expect(sources.status).toBe(200);
    expect(sources.body.data).toHaveLength(7);
    expect(sources.body.data[0]).toEqual({ id: expect.any(String), name: expect.any(String), live: expect.any(Boolean) });
    for (const path of ['/account/makes', '/account/sources', '/account/overview', '/account/keys', '/account/webhooks', '/account/stats?make=Porsche']) {
      expect({ path, status: (await request(`${stack.url}${path}`)).status }).toEqual({ path, status: 401 });
    }
  });
});
