import { AsyncResource } from 'node:async_hooks';
import { createApiKey } from '@cars/accounts';
import { KEYWORD_TOO_SHORT, Queues } from '@cars/contracts';
import { QueryModule } from '@cars/service-query';
import { StatsModule } from '@cars/service-stats';
import { openTestDataSource, useIsolatedQueryEnvironment } from '@cars/testing';
import { DataSource } from 'typeorm';
import { heldWork, AccessProbeModule } from './support/access-probe.module';
import { createTestAccount, settledUsage, TestAccount } from './support/accounts';
import { bearer, JsonResponse, request } from './support/http';
import { parsePrometheus, sampleValue } from './support/prometheus';
import { startTestStack, TestStack } from './support/stack';
import { pgPoolOf } from '@cars/persistence';

/**
 * One customer cannot starve another: the per-account cap on requests in flight (429, not
 * counted, given back however a request ends), the statement timeout of the query and stats
 * services (503 naming the cause, not counted), and keywords no index can serve (400). A database
 * and a vhost of this spec's own: it locks tables to make statements wait.
 */

jest.setTimeout(60_000);

const CAP = 4;
const STATEMENT_TIMEOUT_MS = 1000;

describe('Fair share between accounts', () => {
  let env: { restore(): Promise<void> };
  let stack: TestStack;
  let db: DataSource;

  beforeAll(async () => {
    env = await useIsolatedQueryEnvironment('fair_share');
    db = await openTestDataSource();
    await db.query(`INSERT INTO makes (name) VALUES ('Porsche')`);
    stack = await startTestStack({
      services: [
        { queue: Queues.QueryRpc, module: QueryModule.forRoot({ statementTimeoutMs: STATEMENT_TIMEOUT_MS }) },
        { queue: Queues.StatsRpc, module: StatsModule.forRoot({ statementTimeoutMs: STATEMENT_TIMEOUT_MS }) },
      ],
      gatewayImports: [AccessProbeModule],
      access: { burstCapacity: 10000, burstRatePerSecond: 10000, maxInFlightPerAccount: CAP },
    });
  }, 60_000);

  afterEach(() => heldWork.releaseAll());

  afterAll(async () => {
    heldWork.releaseAll();
    await stack?.close();
    await db?.destroy();
    await env?.restore();
  }, 120_000);

  const get = (path: string, apiKey: string, init: RequestInit = {}): Promise<JsonResponse> =>
    request(`${stack.url}${path}`, { ...bearer(apiKey), ...init });
  const usage = async (account: TestAccount): Promise<number> => {
    const { used, reserved } = await settledUsage(db, account.accountId);
    expect(reserved).toBe(0);
    return used;
  };
  async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  const inFlightGauge = async (): Promise<number | undefined> => {
    const text = await (await fetch(`${stack.url}/metrics`)).text();
    return sampleValue(parsePrometheus(text), 'gateway_account_requests_in_flight');
  };

  describe('requests in flight per account', () => {
    it(`answers the requests beyond ${CAP} in flight with 429 and Retry-After, not counted; the account's other keys share the cap, other accounts do not`, async () => {
      const a = await createTestAccount(db);
      const b = await createTestAccount(db);
      const answers: JsonResponse[] = [];
      const sent = Array.from({ length: CAP + 2 }, () => get('/probe-access/held', a.apiKey).then((res) => answers.push(res)));
      await until(`${CAP} held and 2 answered`, () => heldWork.count === CAP && answers.length === 2);
      for (const refused of answers) {
        expect(refused.status).toBe(429);
        expect(refused.headers.get('retry-after')).toBe('1');
        expect(refused.body).toEqual({
          error: 'Rate Limit Exceeded',
          message: expect.stringContaining(`Too many requests in flight for this account (limit ${CAP} at a time`),
        });
      }
      // Another key of the same account: the same cap.
      const secondKey = await createApiKey(pgPoolOf(db), a.accountId);
      const sameAccount = await get('/probe-access/held', secondKey.apiKey);
      expect(sameAccount.status).toBe(429);
      // Another account: unaffected.
      const other = get('/probe-access/held', b.apiKey);
      await until('the other account held', () => heldWork.count === CAP + 1);

      heldWork.releaseAll();
      await Promise.all(sent);
      expect((await other).status).toBe(200);
      expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 429, 429]);
      expect(await usage(a)).toBe(CAP);
      expect(await usage(b)).toBe(1);
    });

    it('gives a place back when its work ends, also when the client hung up first; the count returns to 0', async () => {
      const a = await createTestAccount(db);
      const aborts = Array.from({ length: CAP }, () => new AbortController());
      const sent = aborts.map((abort) => get('/probe-access/held', a.apiKey, { signal: abort.signal }).catch((error: unknown) => error));
      await until(`${CAP} held`, () => heldWork.count === CAP);
      expect(await inFlightGauge()).toBe(CAP);
      for (const abort of aborts) abort.abort();
      await Promise.all(sent);
      // The clients are gone but their work is not done: the places stay taken (abort-and-resend
      // must not run more than the cap at once).
      expect((await get('/probe-access/held', a.apiKey)).status).toBe(429);

      heldWork.releaseAll();
      await until('the in-flight count back to 0', async () => (await inFlightGauge()) === 0);
      // All places are back: the account gets CAP requests in flight again.
      const again = Array.from({ length: CAP }, () => get('/probe-access/held', a.apiKey));
      await until(`${CAP} held again`, () => heldWork.count === CAP);
      heldWork.releaseAll();
      expect((await Promise.all(again)).map((r) => r.status)).toEqual(Array.from({ length: CAP }, () => 200));
      await until('the in-flight count back to 0', async () => (await inFlightGauge()) === 0);
      // Aborted requests are not counted; the CAP answered ones are.
      expect(await usage(a)).toBe(CAP);
    });

    it('holds and frees places without a Nest interceptor: a counted search through the gateway and the query service binds no AsyncResource', async () => {
      // Nest runs every interceptor through AsyncResource.bind, twice per call, ~20 µs each on
      // Node 20: on the request path that was ~8 % of the gateway's CPU and as much of the query
      // service's. The gateway and the services run in this process here, so the spy sees both.
      const a = await createTestAccount(db);
      expect((await get('/auctions?limit=1', a.apiKey)).status).toBe(200); // warm: key cached, lease granted
      const bind = jest.spyOn(AsyncResource, 'bind');
      try {
        const res = await get('/auctions?limit=1&make=Porsche', a.apiKey);
        expect(res.status).toBe(200);
        expect(bind).not.toHaveBeenCalled();
      } finally {
        bind.mockRestore();
      }
      await until('the place given back', async () => (await inFlightGauge()) === 0);
    });

    it('caps the real query routes: while statements wait, the requests beyond the cap are 429 at once', async () => {
      const a = await createTestAccount(db);
      const lock = await db.createQueryRunner();
      await lock.startTransaction();
      try {
        await lock.query('LOCK TABLE auctions IN ACCESS EXCLUSIVE MODE');
        const answers: JsonResponse[] = [];
        const sent = Array.from({ length: CAP + 2 }, (_, i) => get(`/auctions?limit=1&year_min=${1900 + i}`, a.apiKey).then((res) => answers.push(res)));
        await until('the requests beyond the cap answered', () => answers.length === 2);
        expect(answers.map((r) => r.status)).toEqual([429, 429]);
        await Promise.all(sent);
        expect(answers.map((r) => r.status).sort()).toEqual([429, 429, 503, 503, 503, 503]);
      } finally {
        await lock.rollbackTransaction();
        await lock.release();
      }
      expect(await usage(a)).toBe(0);
    });
  });

  describe('keyword searches of several words', () => {
    it('lets each account have one in flight (429 beyond, not counted), another account and other searches are not held back', async () => {
      const a = await createTestAccount(db);
      const b = await createTestAccount(db);
      const lock = await db.createQueryRunner();
      await lock.startTransaction();
      try {
        await lock.query('LOCK TABLE auctions IN ACCESS EXCLUSIVE MODE');
        const first = get('/auctions?limit=1&keyword=matching%20numbers', a.apiKey);
        await until('the first search waiting', async () => (await inFlightGauge()) === 1);
        const second = await get('/auctions?limit=1&keyword=numbers%20matching', a.apiKey);
        expect(second.status).toBe(429);
        expect(second.headers.get('retry-after')).toBe('1');
        expect(second.body.message).toContain('Too many keyword searches of several words in flight for this account (limit 1 at a time)');
        // The same account's other searches, and another account's several-word search, wait for the statement like the first.
        const others = [get('/auctions?limit=1&keyword=gullwing', a.apiKey), get('/auctions?limit=1&keyword=matching%20numbers', b.apiKey)];
        expect((await Promise.all([first, ...others])).map((r) => r.status)).toEqual([503, 503, 503]);
      } finally {
        await lock.rollbackTransaction();
        await lock.release();
      }
      expect(await usage(a)).toBe(0);
      // The lane is free again.
      expect((await get('/auctions?limit=1&keyword=matching%20numbers', a.apiKey)).status).toBe(200);
      expect(await usage(a)).toBe(1);
    });
  });

  describe('statement timeout', () => {
    it('answers a query stopped at the statement timeout with 503, Retry-After and the cause, not counted', async () => {
      const a = await createTestAccount(db);
      expect((await get('/auctions?limit=1', a.apiKey)).status).toBe(200);
      expect((await get('/stats?make=Porsche', a.apiKey)).status).toBe(200);
      expect(await usage(a)).toBe(2);

      const lock = await db.createQueryRunner();
      await lock.startTransaction();
      try {
        await lock.query('LOCK TABLE auctions, makes IN ACCESS EXCLUSIVE MODE');
        for (const path of ['/auctions?limit=1&keyword=gullwing', '/auctions/live?limit=1', '/stats?make=Porsche']) {
          const started = Date.now();
          const res = await get(path, a.apiKey);
          expect({ path, status: res.status, retryAfter: res.headers.get('retry-after') }).toEqual({ path, status: 503, retryAfter: '1' });
          expect(res.body).toEqual({ error: 'Service Unavailable', message: expect.stringContaining('The query took too long and was stopped') });
          expect(Date.now() - started).toBeGreaterThanOrEqual(STATEMENT_TIMEOUT_MS - 50);
        }
      } finally {
        await lock.rollbackTransaction();
        await lock.release();
      }
      expect(await usage(a)).toBe(2);
      expect((await get('/auctions?limit=1', a.apiKey)).status).toBe(200);
    });
  });

  describe('keywords', () => {
    it('refuses a keyword without a part of 3+ characters with a 400 that says why, on both auction routes', async () => {
      const a = await createTestAccount(db);
      for (const path of ['/auctions?keyword=M3', '/auctions?keyword=a%20b', '/auctions/live?keyword=gt', '/auctions?keyword=%20x%20']) {
        const res = await get(path, a.apiKey);
        expect({ path, status: res.status }).toEqual({ path, status: 400 });
        expect(res.body).toEqual({ error: 'Validation Error', message: expect.any(String), details: { keyword: [KEYWORD_TOO_SHORT] } });
      }
      for (const path of ['/auctions?keyword=M3%20coupe', '/auctions?keyword=911', '/auctions/live?keyword=a%20bcd']) {
        expect({ path, status: (await get(path, a.apiKey)).status }).toEqual({ path, status: 200 });
      }
      expect(await usage(a)).toBe(3);
    });
  });
});
