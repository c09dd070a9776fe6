import { insertAuctions, insertBids, openTestDataSource, useIsolatedQueryEnvironment } from '@cars/testing';
import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { DataSource } from 'typeorm';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createTestAccount } from './support/accounts';
import { bearer, JsonResponse, request } from './support/http';
import { strict } from './support/openapi-schema';
import { startTestGateway, startTestStack, TestStack } from './support/stack';

jest.setTimeout(60_000);

type Schema = Record<string, unknown>;
interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, { parameters?: { name: string; in: string; required?: boolean }[]; responses: Record<string, { content?: Record<string, { schema: Schema }>; headers?: Record<string, unknown> }> }>>;
  components: { schemas: Record<string, Schema> };
}

/**
 * /openapi.json is generated from the same DTO classes the gateway validates with and the query
 * service answers with. Real responses of every query route (successes and errors) are validated
 * against the document's schemas, made strict here: no property outside the schema may appear.
 */
describe('OpenAPI document against real responses', () => {
  let env: { restore(): Promise<void> };
  let stack: TestStack;
  let db: DataSource;
  let doc: OpenApiDocument;
  let ajv: Ajv;
  let auctionId: number;
  let liveId: number;
  const validators = new Map<string, ValidateFunction>();

  function validatorFor(path: string, status: number): ValidateFunction {
    const key = `${path} ${status}`;
    const cached = validators.get(key);
    if (cached) return cached;
    const operation = doc.paths[path]?.get;
    expect(operation).toBeDefined();
    const response = operation.responses[String(status)];
    expect({ key, documented: response !== undefined }).toEqual({ key, documented: true });
    const schema = response.content?.['application/json']?.schema;
    expect({ key, schema: schema !== undefined }).toEqual({ key, schema: true });
    const validate = ajv.compile({ ...(strict(schema) as Schema), components: strict(doc.components) });
    validators.set(key, validate);
    return validate;
  }

  /** Headers of ours a client may rely on: each one sent must be in the document for that status. */
  const CONTRACT_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'www-authenticate', 'etag', 'cache-control'];

  async function expectConforms(path: string, url: string, status: number, init: RequestInit = {}, base = stack.url): Promise<JsonResponse> {
    const res = await request(`${base}${url}`, init);
    expect({ url, status: res.status }).toEqual({ url, status });
    const validate = validatorFor(path, status);
    const valid = validate(res.body);
    expect({ url, errors: valid ? null : validate.errors }).toEqual({ url, errors: null });
    const documented = Object.keys(doc.paths[path].get.responses[String(status)].headers ?? {}).map((h) => h.toLowerCase());
    const sent = CONTRACT_HEADERS.filter((h) => res.headers.has(h));
    expect({ url, status, undocumented: sent.filter((h) => !documented.includes(h)) }).toEqual({ url, status, undocumented: [] });
    return res;
  }

  beforeAll(async () => {
    env = await useIsolatedQueryEnvironment('openapi');
    db = await openTestDataSource();
    await db.query(`INSERT INTO makes (name) VALUES ('Porsche'), ('BMW')`);
    await db.query(`INSERT INTO models (make_id, name) SELECT id, '911' FROM makes WHERE name = 'Porsche'`);
    [auctionId, , , liveId] = await insertAuctions(db, [
      { vin: 'WP0AA0911KS100001', modifications: ['Fuchs wheels'] },
      { price: null, year: null, auction_end_date: null, auction_end_at: null, description: null, vin: null, bid_count: null, views: null, has_reserve: null, mileage_unit: null, seller_type: null, auction_status: 'withdrawn', source_status: 'withdrawn', source: 'hemmings' },
      { ocd_make_name: 'BMW', ocd_model_name: 'M3', currency: 'EUR', source: 'carandclassic', mileage_unit: 'km', country_code: 'DE' },
      { is_live: true, auction_end_at: '2030-01-01T18:00:00Z', auction_end_date: '2030-01-01' },
      { is_live: true, auction_end_at: null, auction_end_date: null, price: null, featured_image_url: null, source: 'carsandbids' },
    ]);
    await insertBids(db, liveId, [{ amount: 1000 }, { amount: null, bid_at: null, bidder_name: null, currency: null }]);
    stack = await startTestStack({ access: { enabled: false } });
    const res = await request(`${stack.url}/openapi.json`);
    expect(res.status).toBe(200);
    doc = res.body;
    ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
  });

  afterAll(async () => {
    await stack?.close();
    await db?.destroy();
    await env?.restore();
  });

  it('is an OpenAPI 3 document with every query route and its parameters', () => {
    expect(doc.openapi).toMatch(/^3\./);
    const params = (path: string) =>
      (doc.paths[path].get.parameters ?? []).map((p) => `${p.in}:${p.name}${p.required ? '!' : ''}`).sort();
    expect(params('/auctions')).toEqual(
      [
        'make', 'model', 'vin', 'seller_username', 'year_min', 'year_max', 'price_min', 'price_max', 'status', 'source',
        'keyword', 'sort', 'direction', 'page', 'limit', 'pagination', 'cursor',
      ].map((n) => `query:${n}`).sort(),
    );
    expect(params('/auctions/live')).toEqual(
      [
        'make', 'model', 'vin', 'seller_username', 'year_min', 'year_max', 'price_min', 'price_max', 'source', 'keyword',
        'ending_after', 'ending_before', 'updated_since', 'sort', 'direction', 'page', 'limit', 'pagination', 'cursor',
      ].map((n) => `query:${n}`).sort(),
    );
    expect(params('/auctions/{auction_id}/bids')).toEqual(
      [
        'path:auction_id!',
        ...['bid_after', 'bid_before', 'sort', 'direction', 'page', 'limit', 'pagination', 'cursor'].map((n) => `query:${n}`),
      ].sort(),
    );
    expect(params('/models')).toEqual(['header:If-None-Match', 'query:make!']);
    for (const path of ['/auctions', '/auctions/live', '/auctions/{auction_id}/bids']) {
      expect(Object.keys(doc.paths[path].get.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '429']));
    }
  });

  it('describes the successful responses of every route', async () => {
    await expectConforms('/auctions', '/auctions', 200);
    await expectConforms('/auctions', '/auctions?sort=price&direction=asc&limit=1&page=2', 200);
    const cursorPage = await expectConforms('/auctions', '/auctions?pagination=cursor&limit=2', 200);
    expect(cursorPage.body.meta.has_more).toBe(true);
    const last = await expectConforms('/auctions', `/auctions?pagination=cursor&limit=2&cursor=${cursorPage.body.meta.next_cursor}`, 200);
    expect(last.body.meta.next_cursor).toBeNull();
    await expectConforms('/auctions', '/auctions?make=Nobody', 200);
    await expectConforms('/auctions/live', '/auctions/live', 200);
    await expectConforms('/auctions/live', '/auctions/live?pagination=cursor&limit=1', 200);
    await expectConforms('/auctions/{auction_id}/bids', `/auctions/${liveId}/bids`, 200);
    await expectConforms('/auctions/{auction_id}/bids', `/auctions/${auctionId}/bids`, 200);
    await expectConforms('/makes', '/makes', 200);
    await expectConforms('/models', '/models?make=Porsche', 200);
    await expectConforms('/stats', '/stats?make=Porsche', 200);
    await expectConforms('/', '/', 200);
    await expectConforms('/health/live', '/health/live', 200);
    const ready = await expectConforms('/health/ready', '/health/ready', 200);
    expect(ready.body.detail.services.query).toEqual({ status: 'up', consumers: 1 });
  });

  it('documents the bearer key as an opaque key, and no schema nothing uses', () => {
    const schemes = (doc as unknown as { components: { securitySchemes: Record<string, { bearerFormat?: string }> } }).components
      .securitySchemes;
    expect(schemes.bearer.bearerFormat).not.toMatch(/JWT/i);
    expect(schemes.bearer.bearerFormat).toContain('cca_live_');
    expect(Object.keys(doc.components.schemas)).not.toContain('Request');
  });

  describe('with API access on: the answers of authentication, plans and allowances', () => {
    let guarded: { url: string; gateway: NestFastifyApplication };
    beforeAll(async () => {
      guarded = await startTestGateway();
    });
    afterAll(async () => {
      await guarded?.gateway.close();
    });

    it('documents every status and header they carry', async () => {
      const at = (path: string, url: string, status: number, init: RequestInit = {}) => expectConforms(path, url, status, init, guarded.url);
      const paid = await createTestAccount(db, { plan: '10k' });
      const free = await createTestAccount(db, { plan: 'free' });
      const exhausted = await createTestAccount(db, { plan: '1k', used: 1000 });
      const ok = await at('/auctions', '/auctions?limit=1', 200, bearer(paid.apiKey));
      expect(ok.headers.get('x-ratelimit-limit')).toBe('10000');
      await at('/stats', '/stats?make=Porsche', 200, bearer(paid.apiKey));
      await at('/auctions/{auction_id}/bids', `/auctions/${liveId}/bids`, 200, bearer(paid.apiKey));
      const missing = await at('/auctions', '/auctions', 401);
      expect(missing.headers.get('www-authenticate')).toBe('Bearer');
      await at('/stats', '/stats?make=Porsche', 401, bearer('cca_live_00000000000000000000000000000000'));
      await at('/stats', '/stats?make=Porsche', 403, bearer(free.apiKey));
      await at('/stats', '/stats?make=Trabantia', 400, bearer(paid.apiKey));
      const limited = await at('/auctions', '/auctions', 429, bearer(exhausted.apiKey));
      expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
      await at('/auctions/live', '/auctions/live', 429, bearer(exhausted.apiKey));
    });
  });

  it('describes the error responses', async () => {
    await expectConforms('/auctions', '/auctions?limit=0&foo=1', 400);
    await expectConforms('/auctions/live', '/auctions/live?source=hemmings', 400);
    await expectConforms('/auctions/{auction_id}/bids', '/auctions/abc/bids', 400);
    await expectConforms('/auctions/{auction_id}/bids', '/auctions/424242/bids', 404);
    await expectConforms('/models', '/models', 400);
    await expectConforms('/makes', '/makes?colour=red', 400);
    await expectConforms('/stats', '/stats', 400);
  });

  it('answers 400 naming an unknown parameter on every route of the document', async () => {
    const walked: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const required = (operation.parameters ?? []).filter((p) => p.required && p.in === 'query');
        const query = new URLSearchParams(
          required.map((p): [string, string] => [p.name, p.name === 'make' ? 'Porsche' : '1']),
        );
        query.append('zz_unknown', 'red');
        const url = `${path.replace('{auction_id}', String(liveId))}?${query}`;
        const res = await request(`${stack.url}${url}`, { method: method.toUpperCase() });
        expect({ method, url, status: res.status }).toEqual({ method, url, status: 400 });
        expect({ url, details: res.body.details }).toEqual({
          url,
          details: expect.objectContaining({ zz_unknown: ['zz_unknown is not a recognised parameter'] }),
        });
        walked.push(`${method} ${path}`);
      }
    }
    expect(walked).toEqual(expect.arrayContaining(['get /makes', 'get /models', 'get /stats', 'get /auctions']));
  });

  it('serves Swagger UI at /docs', async () => {
    const res = await fetch(`${stack.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(await res.text()).toContain('swagger');
  });
});
