import { Queues } from '@cars/contracts';
import { Rng } from '@cars/datagen';
import { createDataSource, toUsd } from '@cars/persistence';
import { StatsModule } from '@cars/service-stats';
import { createIsolatedDatabase, createVhost, deleteVhost } from '@cars/testing';
import { DataSource } from 'typeorm';
import { createTestAccount, TestAccount } from './support/accounts';
import { bearer, JsonResponse, request } from './support/http';
import { startTestStack, TestStack } from './support/stack';

/**
 * GET /stats through the gateway and the stats service over real RabbitMQ and PostgreSQL. Every
 * figure is recomputed here, in TypeScript, from the raw auction rows read back from the database,
 * and must agree exactly. A database and a vhost of this spec's own keep other specs' rows and
 * other stacks' stats consumers away.
 */

interface RawAuction {
  ocd_make_name: string | null;
  ocd_model_name: string | null;
  year: number | null;
  auction_status: string | null;
  is_live: boolean;
  price_usd: number | null;
  auction_end_date: string | null;
}

interface Scope {
  make: string;
  model?: string;
  year_min?: number;
  year_max?: number;
}

const COMPLETED = new Set(['sold', 'reserve not met', 'bid to']);

/** `num / den` rounded half up to `decimals` places (both non-negative integers); 0 when den is 0. */
function roundHalfUp(num: bigint, den: bigint, decimals: number): number {
  if (den === 0n) return 0;
  const scale = 10n ** BigInt(decimals);
  let quotient = (num * scale) / den;
  const remainder = (num * scale) % den;
  if (remainder * 2n >= den) quotient += 1n;
  return Number(quotient) / Number(scale);
}

function monthsEndingAt(now: Date): string[] {
  return Array.from({ length: 12 }, (_, i) => {
    const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 11 + i, 1));
    return d.toISOString().slice(0, 7);
  });
}

/** The stats response of `scope`, from the raw rows (docs/api/stats.md definitions). */
function expectedStats(rows: RawAuction[], scope: Scope, now: Date): unknown {
  const inScope = rows.filter(
    (r) =>
      r.ocd_make_name === scope.make &&
      (scope.model === undefined || r.ocd_model_name === scope.model) &&
      (scope.year_min === undefined || (r.year !== null && r.year >= scope.year_min)) &&
      (scope.year_max === undefined || (r.year !== null && r.year <= scope.year_max)),
  );
  const completed = inScope.filter((r) => !r.is_live && r.auction_status !== null && COMPLETED.has(r.auction_status));
  const sold = completed.filter((r) => r.auction_status === 'sold');
  const sales = sold.filter((r) => r.price_usd !== null);
  const prices = sales.map((r) => r.price_usd!).sort((a, b) => a - b);
  const sum = prices.reduce((acc, p) => acc + BigInt(p), 0n);
  const n = prices.length;
  const median = n === 0 ? 0 : n % 2 === 1 ? prices[(n - 1) / 2] : (prices[n / 2 - 1] + prices[n / 2]) / 2;

  const price_trend = monthsEndingAt(now).map((month) => {
    const inMonth = sales.filter((r) => r.auction_end_date?.startsWith(month));
    const monthSum = inMonth.reduce((acc, r) => acc + BigInt(r.price_usd!), 0n);
    return { date: month, avg_price: roundHalfUp(monthSum, BigInt(inMonth.length), 2), volume: inMonth.length };
  });

  return {
    currency: 'USD',
    total_sales: n,
    average_price: roundHalfUp(sum, BigInt(n), 2),
    median_price: median,
    lowest_price: n === 0 ? 0 : prices[0],
    highest_price: n === 0 ? 0 : prices[n - 1],
    sell_through_rate: roundHalfUp(BigInt(sold.length), BigInt(completed.length), 4),
    price_trend,
  };
}

const MODELS: Record<string, { name: string | null; years: [number, number]; base: number }[]> = {
  Porsche: [
    { name: '911', years: [1964, 1998], base: 90000 },
    { name: '356', years: [1950, 1965], base: 120000 },
    { name: 'Boxster', years: [1997, 2012], base: 25000 },
    { name: null, years: [1960, 1990], base: 40000 },
  ],
  Ferrari: [
    { name: 'Dino', years: [1968, 1974], base: 350000 },
    { name: '308', years: [1975, 1985], base: 80000 },
  ],
};
const SOURCES = [
  { source: 'bringatrailer', currencies: ['USD'] },
  { source: 'collectingcars', currencies: ['GBP', 'EUR', 'USD', 'AUD'] },
  { source: 'carandclassic', currencies: ['GBP', 'EUR'] },
];
const STATUSES = ['sold', 'sold', 'sold', 'sold', 'reserve not met', 'bid to', 'canceled', 'withdrawn', 'unknown'];

/** A mix of makes, models (and none), years (and none), statuses, live rows, currencies and months. */
function generateAuctions(count: number, now: Date, seed: number, idPrefix: string): Record<string, unknown>[] {
  const rng = new Rng(`stats-${seed}`);
  const random = () => rng.next();
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const rows: Record<string, unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const make = random() < 0.7 ? 'Porsche' : 'Ferrari';
    const model = pick(MODELS[make]);
    const { source, currencies } = pick(SOURCES);
    const currency = pick(currencies);
    const live = random() < 0.05;
    const status = live ? null : pick(STATUSES);
    // Months from 15 months ago to this month; a few without an end date.
    const monthsBack = Math.floor(random() * 16);
    const endDate =
      random() < 0.04
        ? null
        : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - monthsBack, 1 + Math.floor(random() * 28)))
            .toISOString()
            .slice(0, 10);
    // Round local prices (ties for the median), in the auction's currency; USD as ingestion converts it.
    const usdTarget = model.base * (0.4 + random() * 1.6);
    const price = random() < 0.03 ? null : Math.round(usdTarget / 500) * 500;
    const priceUsd = price === null ? null : toUsd(price, currency, endDate ?? now.toISOString());
    rows.push({
      source,
      source_auction_id: `${idPrefix}${i}`,
      source_status: live ? 'active' : status === 'unknown' ? 'result unavailable' : status,
      auction_status: status,
      is_live: live,
      price,
      currency,
      price_usd: priceUsd,
      auction_end_date: live ? new Date(now.getTime() + 3 * 86400000).toISOString().slice(0, 10) : endDate,
      year: random() < 0.05 ? null : model.years[0] + Math.floor(random() * (model.years[1] - model.years[0] + 1)),
      ocd_make_name: random() < 0.01 ? null : make,
      ocd_model_name: model.name,
      listing_make: make,
      listing_model: model.name,
    });
  }
  return rows;
}

describe('GET /stats through the gateway over RabbitMQ', () => {
  const saved = { DATABASE_URL: process.env.DATABASE_URL, RABBITMQ_URL: process.env.RABBITMQ_URL };
  const vhost = `${process.env.TEST_RUN_ID}_stats_api`;
  let isolated: { url: string; drop: () => Promise<void> };
  let db: DataSource;
  let stack: TestStack;
  let paid: TestAccount;
  let free: TestAccount;

  const get = (query: string, account: TestAccount = paid): Promise<JsonResponse> =>
    request(`${stack.url}/stats${query}`, bearer(account.apiKey));
  const queryOf = (scope: Scope): string =>
    '?' + new URLSearchParams(Object.fromEntries(Object.entries(scope).map(([k, v]) => [k, String(v)]))).toString();

  async function insertAuctions(rows: Record<string, unknown>[]): Promise<void> {
    await db.query(
      `INSERT INTO auctions (source, source_auction_id, source_status, auction_status, is_live, price, currency, price_usd,
                             auction_end_date, year, ocd_make_name, ocd_model_name, listing_make, listing_model)
       SELECT source, source_auction_id, source_status, auction_status, is_live, price, currency, price_usd,
              auction_end_date, year, ocd_make_name, ocd_model_name, listing_make, listing_model
       FROM json_populate_recordset(NULL::auctions, $1::json)`,
      [JSON.stringify(rows)],
    );
  }

  async function rawAuctions(): Promise<RawAuction[]> {
    const rows: (Omit<RawAuction, 'price_usd'> & { price_usd: string | null })[] = await db.query(
      `SELECT ocd_make_name, ocd_model_name, year, auction_status, is_live, price_usd::text, auction_end_date::text
       FROM auctions`,
    );
    return rows.map((r) => ({ ...r, price_usd: r.price_usd === null ? null : Number(r.price_usd) }));
  }

  /** Asks for every scope and compares each answer with the recomputation from the raw rows. */
  async function expectExactFigures(scopes: Scope[]): Promise<unknown[]> {
    const rows = await rawAuctions();
    const answers: unknown[] = [];
    for (const scope of scopes) {
      const res = await get(queryOf(scope));
      const now = new Date();
      expect({ scope, status: res.status }).toEqual({ scope, status: 200 });
      expect({ scope, body: res.body }).toEqual({ scope, body: expectedStats(rows, scope, now) });
      answers.push(res.body);
    }
    return answers;
  }

  beforeAll(async () => {
    isolated = await createIsolatedDatabase('stats_api');
    process.env.DATABASE_URL = isolated.url;
    process.env.RABBITMQ_URL = createVhost(vhost);
    db = await createDataSource({ url: isolated.url, poolSize: 4, applicationName: 'stats-api-spec' }).initialize();
    await db.query(`INSERT INTO sources (id, name, live, timezone) VALUES
      ('bringatrailer', 'Bring a Trailer', true, 'America/Los_Angeles'),
      ('collectingcars', 'Collecting Cars', false, 'Europe/London'),
      ('carandclassic', 'Car & Classic', false, 'Europe/London')`);
    await db.query(`INSERT INTO makes (name) VALUES ('Porsche'), ('Ferrari'), ('Alfa Romeo'), ('Lancia')`);
    await db.query(`
      INSERT INTO models (make_id, name)
      SELECT mk.id, m.name FROM makes mk
      JOIN (VALUES ('Porsche', '911'), ('Porsche', '356'), ('Porsche', 'Boxster'), ('Ferrari', 'Dino'),
                   ('Ferrari', '308'), ('Alfa Romeo', 'Giulia'), ('Lancia', 'Fulvia'), ('Lancia', 'Delta')) AS m (make, name)
      ON m.make = mk.name`);
    await insertAuctions(generateAuctions(1500, new Date(), 20260117, 'seed-'));
    // Prices on the edges of the median's price buckets (below $100, 100, 999 | 1000, 9999 | 10000),
    // with a median on a bucket's first price and one whose two middle prices straddle two buckets.
    const today = new Date().toISOString().slice(0, 10);
    const edge = (model: string, prices: number[]) =>
      prices.map((price, i) => ({
        source: 'bringatrailer',
        source_auction_id: `edge-${model}-${i}`,
        source_status: 'sold',
        auction_status: 'sold',
        is_live: false,
        price,
        currency: 'USD',
        price_usd: price,
        auction_end_date: today,
        year: 1970 + (i % 3),
        ocd_make_name: 'Lancia',
        ocd_model_name: model,
      }));
    await insertAuctions([
      ...edge('Fulvia', [99, 100, 100, 999, 1000, 1000, 1000, 9999, 10000]),
      ...edge('Delta', [500, 999, 1000, 1001]),
    ]);

    stack = await startTestStack({
      services: [{ queue: Queues.StatsRpc, module: StatsModule }],
      access: { burstCapacity: 10000, burstRatePerSecond: 10000 },
    });
    paid = await createTestAccount(db, { plan: '1k' });
    free = await createTestAccount(db, { plan: 'free' });
  }, 120000);

  afterAll(async () => {
    await stack?.close();
    await db?.destroy();
    process.env.DATABASE_URL = saved.DATABASE_URL;
    process.env.RABBITMQ_URL = saved.RABBITMQ_URL;
    deleteVhost(vhost);
    await isolated?.drop();
  }, 60000);

  it('needs an API key (401) and a paid plan (403 Forbidden on Free)', async () => {
    const anonymous = await request(`${stack.url}/stats?make=Porsche`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error).toBe('Unauthorized');
    const onFree = await get('?make=Porsche', free);
    expect(onFree.status).toBe(403);
    expect(onFree.body.error).toBe('Forbidden');
  }, 60000);

  it('agrees exactly with a recomputation from the raw rows for makes, models and year ranges', async () => {
    const scopes: Scope[] = [
      { make: 'Porsche' },
      { make: 'Porsche', model: '911' },
      { make: 'Porsche', model: '911', year_min: 1965, year_max: 1973 },
      { make: 'Porsche', year_min: 1970 },
      { make: 'Porsche', year_max: 1969 },
      { make: 'Porsche', model: '356', year_min: 1955, year_max: 1955 },
      { make: 'Ferrari' },
      { make: 'Ferrari', model: 'Dino' },
      { make: 'Ferrari', year_min: 1970, year_max: 1980 },
      { make: 'Lancia' },
      { make: 'Lancia', model: 'Fulvia' },
      { make: 'Lancia', model: 'Delta' },
      { make: 'Lancia', model: 'Delta', year_min: 1970 },
    ];
    const answers = (await expectExactFigures(scopes)) as { total_sales: number; price_trend: { volume: number }[] }[];
    // The data exercise what they should: sales in each scope, odd and even counts (median of
    // one or two middle values), and months with and without sales in the trend.
    expect(answers.every((a) => a.total_sales > 0)).toBe(true);
    expect(answers.some((a) => a.total_sales % 2 === 0)).toBe(true);
    expect(answers.some((a) => a.total_sales % 2 === 1)).toBe(true);
    expect(answers[0].price_trend.every((p) => p.volume > 0)).toBe(true);
    expect(answers.some((a) => a.price_trend.some((p) => p.volume === 0))).toBe(true);
    expect(answers.slice(-4).map((a) => (a as unknown as { median_price: number }).median_price)).toEqual([1000, 1000, 999.5, 999.5]);
  }, 60000);

  it('returns the 12 calendar months up to the current one, oldest first', async () => {
    const res = await get('?make=Porsche');
    expect(res.body.price_trend.map((p: { date: string }) => p.date)).toEqual(monthsEndingAt(new Date()));
  }, 60000);

  it('answers 200 with zeros and a 12-month zero trend for a known make or model without sales in scope', async () => {
    const zero = (now: Date) => ({
      currency: 'USD',
      total_sales: 0,
      average_price: 0,
      median_price: 0,
      lowest_price: 0,
      highest_price: 0,
      sell_through_rate: 0,
      price_trend: monthsEndingAt(now).map((date) => ({ date, avg_price: 0, volume: 0 })),
    });
    for (const query of ['?make=Alfa%20Romeo', '?make=Alfa%20Romeo&model=Giulia', '?make=Porsche&year_min=2030']) {
      const res = await get(query);
      expect({ query, status: res.status, body: res.body }).toEqual({ query, status: 200, body: zero(new Date()) });
    }
  }, 60000);

  it('answers 400 Validation Error with details for bad parameters', async () => {
    const cases: { query: string; field: string; contains: string }[] = [
      { query: '', field: 'make', contains: 'required' },
      { query: '?make=', field: 'make', contains: 'empty' },
      { query: '?make=Porsche&make=Ferrari', field: 'make', contains: 'single string' },
      { query: '?make=Trabant', field: 'make', contains: 'GET /makes' },
      { query: '?make=porsche', field: 'make', contains: 'did you mean "Porsche"' },
      { query: '?make=Porsche&model=Testarossa', field: 'model', contains: 'GET /models?make=Porsche' },
      { query: '?make=Alfa%20Romeo&model=giulia', field: 'model', contains: 'did you mean "Giulia"' },
      { query: '?make=Porsche&model=', field: 'model', contains: 'empty' },
      { query: '?make=Porsche&year_min=1990&year_max=1980', field: 'year_min', contains: 'greater than year_max' },
      { query: '?make=Porsche&year_min=abc', field: 'year_min', contains: 'integer' },
      { query: '?make=Porsche&year_max=1970.5', field: 'year_max', contains: 'integer' },
      { query: '?make=Porsche&year_min=', field: 'year_min', contains: 'integer' },
      { query: '?make=Porsche&year_max=100000', field: 'year_max', contains: 'integer' },
      { query: '?make=Porsche&modle=911', field: 'modle', contains: 'not a recognised parameter' },
    ];
    for (const { query, field, contains } of cases) {
      const res = await get(query);
      expect({ query, status: res.status, error: res.body.error }).toEqual({ query, status: 400, error: 'Validation Error' });
      expect({ query, messages: res.body.details?.[field] }).toEqual({
        query,
        messages: expect.arrayContaining([expect.stringContaining(contains)]),
      });
    }
  }, 60000);

  it('is described in the OpenAPI document, with the decisions spelled out', async () => {
    const doc = (await request(`${stack.url}/openapi.json`)).body;
    const operation = doc.paths['/stats'].get;
    const parameters = Object.fromEntries(
      operation.parameters.map((p: { name: string; required: boolean }) => [p.name, p.required]),
    );
    expect(parameters).toEqual({ make: true, model: false, year_min: false, year_max: false });
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '429']));
    expect(operation.description).toContain('reserve not met');
    const schema = doc.components.schemas.StatsResponse;
    expect(Object.keys(schema.properties).sort()).toEqual(
      ['average_price', 'currency', 'highest_price', 'lowest_price', 'median_price', 'price_trend', 'sell_through_rate', 'total_sales'],
    );
    expect(schema.properties.sell_through_rate.description).toContain('canceled, withdrawn and unknown');
  }, 60000);

  it('is never stale: every kind of ingest write shows in the very next answer', async () => {
    const scopes: Scope[] = [
      { make: 'Porsche' },
      { make: 'Porsche', model: '911' },
      { make: 'Porsche', model: '911', year_min: 1965, year_max: 1973 },
    ];
    const before = await expectExactFigures(scopes);

    await db.transaction(async (tx) => {
      // New sales this month (one in GBP), a price correction, a sale withdrawn, a live auction
      // ending sold, an auction re-normalized to another model, and a deletion.
      const month = new Date().toISOString().slice(0, 10);
      await tx.query(
        `INSERT INTO auctions (source, source_auction_id, source_status, auction_status, is_live, price, currency, price_usd,
                               auction_end_date, year, ocd_make_name, ocd_model_name)
         VALUES ('bringatrailer', 'fresh-1', 'sold', 'sold', false, 2750000, 'USD', 2750000, $1, 1970, 'Porsche', '911'),
                ('collectingcars', 'fresh-2', 'sold', 'sold', false, 61000, 'GBP', $2, $1, 1967, 'Porsche', '911')`,
        [month, toUsd(61000, 'GBP', month)],
      );
      await tx.query(`UPDATE auctions SET price_usd = price_usd + 777 WHERE id = (
        SELECT min(id) FROM auctions WHERE ocd_model_name = '911' AND auction_status = 'sold' AND NOT is_live AND price_usd IS NOT NULL)`);
      await tx.query(`UPDATE auctions SET auction_status = 'withdrawn', source_status = 'withdrawn' WHERE id = (
        SELECT max(id) FROM auctions WHERE ocd_make_name = 'Porsche' AND auction_status = 'sold')`);
      await tx.query(`UPDATE auctions SET is_live = false, source_status = 'sold', auction_status = 'sold', auction_end_date = $1
        WHERE id = (SELECT min(id) FROM auctions WHERE ocd_make_name = 'Porsche' AND is_live AND price_usd IS NOT NULL)`, [month]);
      await tx.query(`UPDATE auctions SET ocd_model_name = '911' WHERE id = (
        SELECT min(id) FROM auctions WHERE ocd_model_name = '356' AND auction_status = 'sold')`);
      await tx.query(`DELETE FROM auctions WHERE id = (
        SELECT max(id) FROM auctions WHERE ocd_model_name = '911' AND auction_status = 'reserve not met')`);
    });

    const after = await expectExactFigures(scopes);
    for (let i = 0; i < scopes.length; i++) expect(after[i]).not.toEqual(before[i]);
    expect((after[1] as { highest_price: number }).highest_price).toBe(2750000);
  }, 60000);
});
