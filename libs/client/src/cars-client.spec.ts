import { CarsClient } from './cars-client';
import { ApiError, ConflictError, ForbiddenError, NotFoundError, RateLimitError, ServiceUnavailableError, UnauthorizedError, ValidationError } from './errors';
import type { FetchLike } from './transport';
import type * as Api from './api-types';

interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

type Reply = { status: number; body?: unknown; headers?: Record<string, string> };

/** A fetch that records each request and answers from a script (the last reply repeats). */
function fakeFetch(...replies: Reply[]): { fetch: FetchLike; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetch: FetchLike = async (url, init) => {
    sent.push({ url, method: init.method, headers: init.headers, body: init.body });
    const reply = replies[Math.min(sent.length - 1, replies.length - 1)];
    const headers = new Map(Object.entries(reply.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    return {
      status: reply.status,
      headers: { get: (name: string) => headers.get(name.toLowerCase()) ?? null },
      text: async () => (reply.body === undefined ? '' : typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body)),
    };
  };
  return { fetch, sent };
}

const BURST = {
  status: 429,
  headers: { 'retry-after': '1' },
  body: { error: 'Rate Limit Exceeded', message: 'Burst limit exceeded: the 1K plan allows 10 requests per second per API key, in bursts of up to 20; retry after 1 s' },
};
const MONTHLY = {
  status: 429,
  headers: { 'x-ratelimit-limit': '1000', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1767225600' },
  body: {
    error: 'Rate Limit Exceeded',
    message: 'Monthly request limit of 1,000 for the 1K plan exceeded; the allowance resets at the start of next month (UTC, see X-RateLimit-Reset), or upgrade the plan',
  },
};
const PAGE = { data: [], meta: { total: 0, page: 1, limit: 50, total_pages: 0, has_more: false, next_cursor: null } };

function client(fetch: FetchLike, options: { maxRetries?: number; maxRetryDelayMs?: number; maxConflictWaitMs?: number } = {}) {
  const waits: number[] = [];
  const cars = new CarsClient({
    baseUrl: 'https://api.example.test/v/',
    apiKey: 'cca_live_key',
    fetch,
    sleep: async (ms) => void waits.push(ms),
    ...options,
  });
  return { cars, waits };
}

describe('CarsClient requests', () => {
  it('sends each route with its method, path, query and body; the key only where one is needed', async () => {
    const { fetch, sent } = fakeFetch({ status: 200, body: PAGE });
    const { cars } = client(fetch);
    await cars.index();
    await cars.health.live();
    await cars.makes();
    await cars.models('Alfa Romeo');
    await cars.auctions.search({ make: 'Porsche', model: '911', year_min: 1965, limit: 20, sort: 'price', direction: 'desc' });
    await cars.auctions.live({ ending_before: '2026-12-01T00:00:00Z' });
    await cars.auctions.bids(42, { sort: 'amount' });
    await cars.stats({ make: 'Porsche', model: '911' });
    await cars.webhooks.list({ page: 2, limit: 10 });
    await cars.webhooks.create({ url: 'https://hooks.example.com/cars', event_types: ['auction.ended'] });
    await cars.webhooks.get('whe_1');
    await cars.webhooks.update('whe_1', { enabled: false });
    await cars.webhooks.sendTest('whe_1');
    await cars.webhooks.rotateSecret('whe_1');
    await cars.webhooks.deliveries('whe_1');
    await cars.webhooks.retryDelivery('whe_1', 'whd/2');
    await cars.webhooks.recover('whe_1', { since: '2026-11-20T00:00:00Z' });
    expect(sent.map((s) => `${s.method} ${s.url.replace('https://api.example.test/v', '')}${s.headers.authorization ? ' (key)' : ''}`)).toEqual([
      'GET /',
      'GET /health/live',
      'GET /makes',
      'GET /models?make=Alfa+Romeo',
      'GET /auctions?make=Porsche&model=911&year_min=1965&limit=20&sort=price&direction=desc (key)',
      'GET /auctions/live?ending_before=2026-12-01T00%3A00%3A00Z (key)',
      'GET /auctions/42/bids?sort=amount (key)',
      'GET /stats?make=Porsche&model=911 (key)',
      'GET /webhooks?page=2&limit=10 (key)',
      'POST /webhooks (key)',
      'GET /webhooks/whe_1 (key)',
      'PATCH /webhooks/whe_1 (key)',
      'POST /webhooks/whe_1/test (key)',
      'POST /webhooks/whe_1/secret/rotate (key)',
      'GET /webhooks/whe_1/deliveries (key)',
      'POST /webhooks/whe_1/deliveries/whd%2F2/retry (key)',
      'POST /webhooks/whe_1/recover (key)',
    ]);
    expect(sent[4].headers.authorization).toBe('Bearer cca_live_key');
    const bodies = sent.filter((s) => s.body !== undefined).map((s) => [s.method, JSON.parse(s.body!), s.headers['content-type']]);
    expect(bodies).toEqual([
      ['POST', { url: 'https://hooks.example.com/cars', event_types: ['auction.ended'] }, 'application/json'],
      ['PATCH', { enabled: false }, 'application/json'],
      ['POST', { since: '2026-11-20T00:00:00Z' }, 'application/json'],
    ]);
    // Routes without a body send no content-type (an empty JSON body is not a body).
    expect(sent.find((s) => s.url.endsWith('/test'))!.headers['content-type']).toBeUndefined();
  });

  it('returns the parsed body; DELETE (204) returns nothing; /health/ready answers 503 as a result', async () => {
    const ready = { status: 'unavailable', checks: { database: 'down', broker: 'up' }, detail: { services: {} } };
    const { fetch } = fakeFetch({ status: 200, body: PAGE }, { status: 204 }, { status: 503, body: ready });
    const { cars } = client(fetch);
    expect(await cars.auctions.search()).toEqual(PAGE);
    expect(await cars.webhooks.delete('whe_1')).toBeUndefined();
    expect(await cars.health.ready()).toEqual(ready);
  });

  it('keeps the monthly allowance of the latest counted response', async () => {
    const { fetch } = fakeFetch({ status: 200, body: PAGE, headers: { 'X-RateLimit-Limit': '1000', 'X-RateLimit-Remaining': '998', 'X-RateLimit-Reset': '1767225600' } });
    const { cars } = client(fetch);
    expect(cars.rateLimit).toBeUndefined();
    await cars.auctions.search();
    expect(cars.rateLimit).toEqual({ limit: 1000, remaining: 998, resetsAt: new Date('2026-01-01T00:00:00Z') });
  });
});

describe('CarsClient errors', () => {
  it.each([
    [400, ValidationError, 'Validation Error'],
    [401, UnauthorizedError, 'Unauthorized'],
    [403, ForbiddenError, 'Forbidden'],
    [404, NotFoundError, 'Not Found'],
    [409, ConflictError, 'Conflict'],
    [503, ServiceUnavailableError, 'Service Unavailable'],
    [500, ApiError, 'Internal Server Error'],
  ])('maps %s to its error class, with the error body', async (status, Type, error) => {
    const { fetch } = fakeFetch({ status, body: { error, message: `${error}!` } });
    const { cars } = client(fetch, { maxRetries: 0 });
    const thrown = await cars.webhooks.create({ url: 'https://x.test', event_types: ['bid.created'] }).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(Type);
    expect(thrown).toBeInstanceOf(ApiError);
    expect(thrown).toMatchObject({ status, error, message: `${error}!`, details: undefined, retryAfter: undefined, name: Type.name });
  });

  it('carries the details of a 400', async () => {
    const body = { error: 'Validation Error', message: 'Invalid parameter: limit', details: { limit: ['limit must be an integer from 1 to 100'] } };
    const { fetch } = fakeFetch({ status: 400, body });
    const error = (await client(fetch).cars.auctions.search({ limit: 1000 }).catch((e: unknown) => e)) as ValidationError;
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.details).toEqual({ limit: ['limit must be an integer from 1 to 100'] });
    expect(error.body).toEqual(body);
  });

  it('makes an ApiError of an answer that is not the error envelope (e.g. a proxy page)', async () => {
    const { fetch } = fakeFetch({ status: 502, body: '<html>Bad Gateway</html>' });
    const error = (await client(fetch).cars.makes().catch((e: unknown) => e)) as ApiError;
    expect(error).toMatchObject({ name: 'ApiError', status: 502, error: 'HTTP 502', message: 'HTTP 502', body: '<html>Bad Gateway</html>' });
  });
});

describe('CarsClient and the burst limit', () => {
  it('waits Retry-After and sends again: the caller sees only the answer', async () => {
    const { fetch, sent } = fakeFetch(BURST, BURST, { status: 200, body: PAGE });
    const { cars, waits } = client(fetch);
    expect(await cars.auctions.search({ make: 'Porsche' })).toEqual(PAGE);
    expect(sent).toHaveLength(3);
    expect(waits).toEqual([1000, 1000]);
  });

  it('retries a burst 429 of any method (it was refused before anything ran)', async () => {
    const { fetch, sent } = fakeFetch(BURST, { status: 201, body: { data: {}, secret: 'whsec_x' } });
    const { cars } = client(fetch);
    await cars.webhooks.create({ url: 'https://x.test', event_types: ['bid.created'] });
    expect(sent.map((s) => s.method)).toEqual(['POST', 'POST']);
  });

  it('gives up after maxRetries with a RateLimitError of kind burst', async () => {
    const { fetch, sent } = fakeFetch(BURST);
    const { cars, waits } = client(fetch, { maxRetries: 2 });
    const error = (await cars.auctions.search().catch((e: unknown) => e)) as RateLimitError;
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ kind: 'burst', retryAfter: 1, status: 429, error: 'Rate Limit Exceeded' });
    expect(sent).toHaveLength(3);
    expect(waits).toEqual([1000, 1000]);
  });

  it('with retries off, surfaces the first burst 429', async () => {
    const { fetch, sent } = fakeFetch(BURST);
    const error = await client(fetch, { maxRetries: 0 }).cars.auctions.search().catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'RateLimitError', kind: 'burst', retryAfter: 1 });
    expect(sent).toHaveLength(1);
  });

  it('never retries the monthly allowance: retrying cannot help until the period resets', async () => {
    const { fetch, sent } = fakeFetch(MONTHLY);
    const { cars, waits } = client(fetch);
    const error = (await cars.auctions.search().catch((e: unknown) => e)) as RateLimitError;
    expect(error).toMatchObject({ kind: 'monthly', retryAfter: undefined, rateLimit: { limit: 1000, remaining: 0 } });
    expect(error.rateLimit!.resetsAt.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(sent).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('does not wait longer than maxRetryDelayMs', async () => {
    const { fetch, sent } = fakeFetch({ ...BURST, headers: { 'retry-after': '120' } });
    const error = await client(fetch, { maxRetryDelayMs: 10_000 }).cars.auctions.search().catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'burst', retryAfter: 120 });
    expect(sent).toHaveLength(1);
  });

  it('retries a 503 with Retry-After on GET only (a POST may have been carried out)', async () => {
    const unavailable = { status: 503, headers: { 'retry-after': '1' }, body: { error: 'Service Unavailable', message: 'The query service did not answer in time' } };
    const get = fakeFetch(unavailable, { status: 200, body: PAGE });
    expect(await client(get.fetch).cars.auctions.search()).toEqual(PAGE);
    expect(get.sent).toHaveLength(2);
    const post = fakeFetch(unavailable, { status: 202, body: {} });
    await expect(client(post.fetch).cars.webhooks.sendTest('whe_1')).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(post.sent).toHaveLength(1);
  });

  it('stops waiting when the caller aborts', async () => {
    const { fetch, sent } = fakeFetch(BURST);
    const cars = new CarsClient({ baseUrl: 'https://api.example.test', apiKey: 'k', fetch });
    const controller = new AbortController();
    const pending = cars.auctions.search({}, { signal: controller.signal });
    // Once the first 429 is in, all that is left is the wait for its Retry-After (1 s, a real timer).
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toHaveLength(1);
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
    expect(sent).toHaveLength(1);
  });
});

describe('CarsClient and a webhook delete during a delivery attempt', () => {
  const IN_FLIGHT = {
    status: 409,
    headers: { 'retry-after': '2' },
    body: { error: 'Conflict', message: 'A delivery attempt to this endpoint is in flight; delete it once the attempt ends (at most 10 s): retry after 2 s' },
  };

  it('waits Retry-After and deletes once the attempt is over', async () => {
    const { fetch, sent } = fakeFetch(IN_FLIGHT, IN_FLIGHT, { status: 204 });
    const { cars, waits } = client(fetch);
    await expect(cars.webhooks.delete('whe_1')).resolves.toBeUndefined();
    expect(sent.map((s) => `${s.method} ${s.url}`)).toEqual(Array(3).fill('DELETE https://api.example.test/v/webhooks/whe_1'));
    expect(waits).toEqual([2000, 2000]);
  });

  it('gives up with the ConflictError once maxConflictWaitMs would be passed', async () => {
    const { fetch, sent } = fakeFetch(IN_FLIGHT);
    const { cars, waits } = client(fetch, { maxConflictWaitMs: 5000 });
    const error = await cars.webhooks.delete('whe_1').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ status: 409, retryAfter: 2 });
    expect(waits).toEqual([2000, 2000]);
    expect(sent).toHaveLength(3);
    // With the default budget (30 s): fifteen waits of 2 s.
    const again = client(fakeFetch(IN_FLIGHT).fetch);
    await expect(again.cars.webhooks.delete('whe_1')).rejects.toBeInstanceOf(ConflictError);
    expect(again.waits).toHaveLength(15);
  });

  it('does not wait out a 409 without Retry-After, nor a 409 of another route', async () => {
    const final = { ...IN_FLIGHT, headers: {} };
    const { fetch, sent } = fakeFetch(final);
    await expect(client(fetch).cars.webhooks.delete('whe_1')).rejects.toBeInstanceOf(ConflictError);
    expect(sent).toHaveLength(1);
    const cooldown = fakeFetch({ status: 409, headers: { 'retry-after': '58' }, body: { error: 'Conflict', message: 'One test per endpoint per minute' } });
    await expect(client(cooldown.fetch).cars.webhooks.sendTest('whe_1')).rejects.toBeInstanceOf(ConflictError);
    expect(cooldown.sent).toHaveLength(1);
    const off = fakeFetch(IN_FLIGHT);
    await expect(client(off.fetch, { maxConflictWaitMs: 0 }).cars.webhooks.delete('whe_1')).rejects.toBeInstanceOf(ConflictError);
    expect(off.sent).toHaveLength(1);
  });
});

describe('CarsClient paging', () => {
  const auction = (id: number) => ({ id }) as Api.Auction;
  const page = (ids: number[], next: string | null) => ({ data: ids.map(auction), meta: { ...PAGE.meta, next_cursor: next } });

  it('follows next_cursor to the last page, in cursor mode, with the same filters', async () => {
    const { fetch, sent } = fakeFetch({ status: 200, body: page([1, 2], 'c1.aaaaaaaaaaaaaaaa') }, { status: 200, body: page([3, 4], 'c2.bbbbbbbbbbbbbbbb') }, { status: 200, body: page([5], null) });
    const ids: (number | null)[] = [];
    for await (const item of client(fetch).cars.auctions.searchAll({ make: 'Porsche', limit: 2 })) ids.push(item.id);
    expect(ids).toEqual([1, 2, 3, 4, 5]);
    expect(sent.map((s) => new URL(s.url).search)).toEqual([
      '?make=Porsche&limit=2&pagination=cursor',
      '?make=Porsche&limit=2&pagination=cursor&cursor=c1.aaaaaaaaaaaaaaaa',
      '?make=Porsche&limit=2&pagination=cursor&cursor=c2.bbbbbbbbbbbbbbbb',
    ]);
  });

  it('starts at a page number when given one, then follows the cursor (page dropped)', async () => {
    const { fetch, sent } = fakeFetch({ status: 200, body: page([7], 'c3.cccccccccccccccc') }, { status: 200, body: page([8], null) });
    const ids: (number | null)[] = [];
    for await (const bid of client(fetch).cars.auctions.bidsAll(9, { page: 3, limit: 1 })) ids.push(bid.id);
    expect(ids).toEqual([7, 8]);
    expect(sent.map((s) => new URL(s.url).pathname + new URL(s.url).search)).toEqual([
      '/v/auctions/9/bids?page=3&limit=1',
      '/v/auctions/9/bids?limit=1&pagination=cursor&cursor=c3.cccccccccccccccc',
    ]);
  });

  it('fetches pages only as items are consumed', async () => {
    const { fetch, sent } = fakeFetch({ status: 200, body: page([1, 2], 'c1.aaaaaaaaaaaaaaaa') }, { status: 200, body: page([3], null) });
    for await (const item of client(fetch).cars.auctions.liveAll()) {
      expect(item.id).toBe(1);
      break;
    }
    expect(sent).toHaveLength(1);
  });

  it('retries a burst 429 in the middle of the paging without losing its place', async () => {
    const { fetch, sent } = fakeFetch({ status: 200, body: page([1], 'c1.aaaaaaaaaaaaaaaa') }, BURST, { status: 200, body: page([2], null) });
    const ids: (number | null)[] = [];
    for await (const item of client(fetch).cars.auctions.searchAll()) ids.push(item.id);
    expect(ids).toEqual([1, 2]);
    expect(new URL(sent[2].url).searchParams.get('cursor')).toBe('c1.aaaaaaaaaaaaaaaa');
  });

  it('stops rather than loop when the API repeats a cursor', async () => {
    const { fetch } = fakeFetch({ status: 200, body: page([1], 'same.aaaaaaaaaaaaaaaa') });
    const consume = async () => {
      for await (const _ of client(fetch).cars.auctions.searchAll()) void _;
    };
    await expect(consume()).rejects.toThrow(/twice/);
  });

  it('lists every webhook page by page, once each, up to total_pages', async () => {
    const hook = (id: string) => ({ id }) as Api.Webhook;
    const meta = (page: number) => ({ total: 5, page, limit: 2, total_pages: 3 });
    const { fetch, sent } = fakeFetch(
      { status: 200, body: { data: [hook('a'), hook('b')], meta: meta(1) } },
      // One created meanwhile pushed `b` onto page 2.
      { status: 200, body: { data: [hook('b'), hook('c')], meta: meta(2) } },
      { status: 200, body: { data: [hook('d')], meta: meta(3) } },
    );
    const ids: string[] = [];
    for await (const webhook of client(fetch).cars.webhooks.listAll({ limit: 2 })) ids.push(webhook.id);
    expect(ids).toEqual(['a', 'b', 'c', 'd']);
    expect(sent.map((s) => new URL(s.url).search)).toEqual(['?limit=2&page=1', '?limit=2&page=2', '?limit=2&page=3']);
  });
});

describe('CarsClient options', () => {
  it('needs a base URL', () => {
    expect(() => new CarsClient({ baseUrl: '' })).toThrow(/baseUrl/);
  });

  it('sends extra headers on every request', async () => {
    const { fetch, sent } = fakeFetch({ status: 200, body: { data: [] } });
    await new CarsClient({ baseUrl: 'https://api.example.test', fetch, headers: { 'user-agent': 'pricing-desk/2' } }).makes();
    expect(sent[0].headers['user-agent']).toBe('pricing-desk/2');
  });
});
