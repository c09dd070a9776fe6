import { AUCTION_SORTS, LIVE_AUCTION_SORTS, SortDirection } from '@cars/contracts';
import { CostlyTurns, createDataSource, pgPoolOf } from '@cars/persistence';
import { AuctionSeed, createIsolatedDatabase, insertAuctions } from '@cars/testing';
import { DataSource } from 'typeorm';
import { PgSqlClient } from '../sql/sql-client';
import { AuctionFilters, AuctionOrder, AuctionScope, KeysetPosition, SORT_COLUMNS } from './auction-query';
import { AuctionRow, AuctionsRepository } from './auctions.repository';

/**
 * AuctionsRepository against a migrated database of its own: which rows come back, in which order,
 * for each filter, sort, offset and keyset position. Expected orders are computed here from the
 * seed rows, not from SQL.
 */

type Seed = Partial<AuctionSeed>;

const COMPLETED: Record<string, Seed> = {
  p67: { title: '1967 Porsche 911S Coupe', year: 1967, price: 145000, bid_count: 20, vin: 'WP0AA0911KS100001', seller_username: 'flat6fan', auction_end_date: '2025-06-01', auction_end_at: '2025-06-02T02:00:00Z', description: 'Numbers-matching engine, 100% documented.', updated_at: '2025-06-02T02:05:00.000001Z' },
  p73: { title: '1973 Porsche 911 Carrera RS', year: 1973, price: 210000, bid_count: 45, source: 'carsandbids', vin: 'wp0aa0911ks100001', seller_username: 'dealer_x', auction_end_date: '2025-07-15', auction_end_at: '2025-07-15T19:00:00Z', description: 'Lightweight touring car.', updated_at: '2025-06-02T02:05:00.000002Z' },
  p356: { title: '1960 Porsche 356B Roadster', ocd_model_name: '356', year: 1960, price: 95000, bid_count: 12, source: 'pcarmarket', auction_status: 'reserve not met', source_status: 'reserve not met', auction_end_date: '2024-11-02', auction_end_at: '2024-11-02T20:00:00Z', description: 'Restored roadster.' },
  p89: { title: '1989 Porsche 911 Speedster', year: 1989, price: null, bid_count: null, source: 'hemmings', auction_status: 'withdrawn', source_status: 'withdrawn', auction_end_date: '2025-01-10', auction_end_at: null, description: 'Withdrawn before the end.' },
  dino: { title: '1972 Ferrari Dino 246 GT', ocd_make_name: 'Ferrari', ocd_model_name: 'Dino 246', year: 1972, price: 400000, bid_count: 60, source: 'collectingcars', auction_end_date: '2025-03-03', auction_end_at: '2025-03-03T18:00:00Z', description: 'Ferrari Classiche certified.' },
  gull: { title: '1955 Mercedes-Benz 300SL GULLWING', ocd_make_name: 'Mercedes-Benz', ocd_model_name: '300SL', year: 1955, price: 1500000, bid_count: 30, source: 'hagerty', auction_end_date: '2025-05-05', auction_end_at: '2025-05-05T17:00:00Z', description: 'Rudge wheels, drivable.' },
  pagoda: { title: '1969 Mercedes-Benz 280SL Pagoda', ocd_make_name: 'Mercedes-Benz', ocd_model_name: '280SL', year: 1969, price: 120000, bid_count: 30, auction_status: 'bid to', source_status: 'reserve not met', auction_end_date: '2025-05-05', auction_end_at: '2025-05-05T17:00:00Z', description: 'A gullwing it is not.' },
  m3: { title: '1988 BMW M3', ocd_make_name: 'BMW', ocd_model_name: 'M3', year: 1988, price: 80000, bid_count: 5, source: 'carandclassic', auction_status: 'canceled', source_status: 'canceled', auction_end_date: '2024-02-20', auction_end_at: null, description: 'E30 with a_b underscores and 50% more power.' },
  giulia: { title: 'Alfa Romeo Giulia Sprint', ocd_make_name: 'Alfa Romeo', ocd_model_name: 'Giulia', year: null, price: 30000, bid_count: 3, auction_status: 'unknown', source_status: 'result unavailable', auction_end_date: null, auction_end_at: null, description: null },
  tie: { title: '1995 Porsche 911 Carrera', year: 1995, price: 145000, bid_count: 20, seller_username: 'flat6fan', auction_end_date: '2025-06-01', auction_end_at: '2025-06-01T19:00:00Z', description: 'Same day as the 1967 car.' },
};

const LIVE: Record<string, Seed> = {
  l911: { title: '1970 Porsche 911T', year: 1970, price: 80000, bid_count: 15, auction_end_date: '2030-01-01', auction_end_at: '2030-01-01T18:00:00Z', created_at: '2025-12-20T00:00:00Z', updated_at: '2026-01-01T10:00:00Z' },
  lM3: { title: '1990 BMW M3 Sport Evolution', ocd_make_name: 'BMW', ocd_model_name: 'M3', year: 1990, price: 120000, bid_count: 30, source: 'carsandbids', auction_end_date: '2030-01-02', auction_end_at: '2030-01-02T18:00:00Z', created_at: '2025-12-22T00:00:00Z', updated_at: '2026-01-01T12:00:00Z' },
  l356: { title: '1958 Porsche 356A Speedster', ocd_model_name: '356', year: 1958, price: 150000, bid_count: 25, source: 'carsandbids', auction_end_date: '2030-01-01', auction_end_at: '2030-01-01T12:00:00Z', created_at: '2025-12-21T00:00:00Z', updated_at: '2026-01-01T08:00:00Z', description: 'Speedster with 50% new paint.' },
  lNoEnd: { title: '1965 Ferrari 275 GTB', ocd_make_name: 'Ferrari', ocd_model_name: '275 GTB', year: 1965, price: null, bid_count: 0, auction_end_date: null, auction_end_at: null, created_at: '2025-12-23T00:00:00Z', updated_at: '2026-01-01T09:00:00Z' },
  // One microsecond apart: a keyset position must keep timestamps to the microsecond.
  lMicroA: { title: '1963 Jaguar E-Type', ocd_make_name: 'Jaguar', ocd_model_name: 'E-Type', year: 1963, price: 150000, bid_count: 25, auction_end_date: '2030-01-03', auction_end_at: '2030-01-03T18:00:00.000001Z', created_at: '2025-12-24T00:00:00.000001Z', updated_at: '2026-01-01T11:00:00.000001Z' },
  lMicroB: { title: '1964 Jaguar E-Type', ocd_make_name: 'Jaguar', ocd_model_name: 'E-Type', year: 1964, price: null, bid_count: null, auction_end_date: '2030-01-03', auction_end_at: '2030-01-03T18:00:00.000002Z', created_at: '2025-12-24T00:00:00.000002Z', updated_at: '2026-01-01T11:00:00.000002Z' },
};

/** Seed value of each sort (the factory's defaults where a row does not override them). */
const DEFAULTS = { created_at: '2025-05-25T12:00:00Z', updated_at: '2025-06-01T19:05:00Z' };
const isoMicros = (value: string) => {
  // Compare instants exactly: seconds as text, then the fraction as microseconds.
  const [whole, fraction = ''] = value.replace('Z', '').split('.');
  return `${whole}.${fraction.padEnd(6, '0')}`;
};
const SORT_VALUE: Record<keyof typeof SORT_COLUMNS, (seed: Seed) => string | number | null> = {
  date: (s) => s.auction_end_date ?? null,
  ending: (s) => (s.auction_end_at == null ? null : isoMicros(s.auction_end_at)),
  created: (s) => isoMicros(s.created_at ?? DEFAULTS.created_at),
  updated: (s) => isoMicros(s.updated_at ?? DEFAULTS.updated_at),
  price: (s) => (s.price === undefined ? 145000 : s.price),
  year: (s) => (s.year === undefined ? 1967 : s.year),
  bids: (s) => (s.bid_count === undefined ? 20 : s.bid_count),
};

describe('AuctionsRepository (PostgreSQL)', () => {
  let drop: (() => Promise<void>) | undefined;
  let db: DataSource;
  let repository: AuctionsRepository;
  const ids: Record<string, number> = {};
  const nameOf = new Map<number, string>();

  const names = (rows: AuctionRow[]) => rows.map((row) => nameOf.get(Number(row.id)) ?? `unknown id ${row.id}`);
  const all = (scope: AuctionScope) => Object.keys(scope === 'live' ? LIVE : COMPLETED);
  const seedOf = (name: string): Seed => COMPLETED[name] ?? LIVE[name];

  /** The names of a scope in the repository's order, computed from the seeds: nulls last, ties by id. */
  const expectedOrder = (scope: AuctionScope, order: AuctionOrder, only: (name: string) => boolean = () => true) => {
    const value = SORT_VALUE[order.sort];
    const sign = order.direction === 'asc' ? 1 : -1;
    return all(scope)
      .filter(only)
      .sort((a, b) => {
        const [va, vb] = [value(seedOf(a)), value(seedOf(b))];
        if (va === null || vb === null) {
          if (va !== vb) return va === null ? 1 : -1;
        } else if (va !== vb) {
          return (va < vb ? -1 : 1) * sign;
        }
        return (ids[a] - ids[b]) * sign;
      });
  };

  /** Every matching row by created_at, then id: insertion order for the completed seeds, which share created_at. */
  const found = async (scope: AuctionScope, filters: AuctionFilters) =>
    names(await repository.page({ scope, filters, order: { sort: 'created', direction: 'asc' }, limit: 100 }));

  beforeAll(async () => {
    const database = await createIsolatedDatabase('auctions_repository');
    drop = database.drop;
    db = await createDataSource({ url: database.url, poolSize: 4, applicationName: 'test' }).initialize();
    repository = new AuctionsRepository(new PgSqlClient(pgPoolOf(db)), new CostlyTurns(1, 10_000));
    const entries = [
      ...Object.entries(COMPLETED),
      ...Object.entries(LIVE).map(([name, seed]): [string, Seed] => [name, { ...seed, is_live: true }]),
    ];
    const inserted = await insertAuctions(db, entries.map(([, seed]) => seed));
    entries.forEach(([name], i) => {
      ids[name] = inserted[i];
      nameOf.set(inserted[i], name);
    });
  });

  afterAll(async () => {
    await db?.destroy();
    await drop?.();
  });

  describe('filters', () => {
    it('keeps the completed and the live auctions apart', async () => {
      expect(await found('completed', {})).toEqual(all('completed'));
      expect((await found('live', {})).sort()).toEqual(all('live').sort());
      expect(await repository.count('completed', {})).toBe(10);
      expect(await repository.count('live', {})).toBe(6);
    });

    it.each<[string, AuctionFilters, string[]]>([
      ['make, exactly', { make: 'Porsche' }, ['p67', 'p73', 'p356', 'p89', 'tie']],
      ['make, case-sensitively', { make: 'porsche' }, []],
      ['make and model', { make: 'Porsche', model: '356' }, ['p356']],
      ['vin, case-sensitively', { vin: 'WP0AA0911KS100001' }, ['p67']],
      ['vin in lower case', { vin: 'wp0aa0911ks100001' }, ['p73']],
      ['seller_username', { seller_username: 'flat6fan' }, ['p67', 'tie']],
      ['inclusive year bounds', { year_min: 1967, year_max: 1972 }, ['p67', 'dino', 'pagoda']],
      ['a one-year range', { year_min: 1967, year_max: 1967 }, ['p67']],
      ['year_min alone', { year_min: 1989 }, ['p89', 'tie']],
      ['inclusive price bounds', { price_min: 145000, price_max: 400000 }, ['p67', 'p73', 'dino', 'tie']],
      ['price_max alone', { price_max: 30000 }, ['giulia']],
      ['status with a space', { status: 'bid to' }, ['pagoda']],
      ['status', { status: 'sold' }, ['p67', 'p73', 'dino', 'gull', 'tie']],
      ['source', { source: 'carsandbids' }, ['p73']],
      ['keyword in a title, any case', { keyword: 'gullwing' }, ['gull', 'pagoda']],
      ['keyword with make and model', { keyword: 'GULLWING', make: 'Mercedes-Benz', model: '300SL' }, ['gull']],
      ['keyword across description tokens', { keyword: 'matching engine' }, ['p67']],
      ['keyword with a literal %', { keyword: '100%' }, ['p67']],
      ['keyword with a literal _', { keyword: 'a_b' }, ['m3']],
      ['keyword whose % is no wildcard', { keyword: 'a%b' }, []],
      // Unescaped, `a\b` would match the `ab` of 'drivable'.
      ['keyword with a literal backslash', { keyword: 'a\\b' }, []],
    ])('completed: %s', async (_, filters, expected) => {
      expect(await found('completed', filters)).toEqual(expected);
      expect(await repository.count('completed', filters)).toBe(expected.length);
    });

    it.each<[string, AuctionFilters, string[]]>([
      ['make', { make: 'Porsche' }, ['l911', 'l356']],
      ['source', { source: 'carsandbids' }, ['lM3', 'l356']],
      ['keyword with a literal %', { keyword: '50%' }, ['l356']],
      ['inclusive ending_after', { ending_after: '2030-01-01T12:00:00Z' }, ['l911', 'lM3', 'l356', 'lMicroA', 'lMicroB']],
      ['inclusive ending_before with an offset', { ending_before: '2030-01-01T19:00:00+01:00' }, ['l911', 'l356']],
      ['ending_after to the microsecond', { ending_after: '2030-01-03T18:00:00.000002Z' }, ['lMicroB']],
      ['inclusive updated_since', { updated_since: '2026-01-01T10:00:00Z' }, ['l911', 'lM3', 'lMicroA', 'lMicroB']],
    ])('live: %s', async (_, filters, expected) => {
      const rows = await found('live', filters);
      expect(rows.sort()).toEqual([...expected].sort());
      expect(await repository.count('live', filters)).toBe(expected.length);
    });

    it('applies every filter: one that does not match leaves nothing', async () => {
      const completed: AuctionFilters = {
        make: 'Porsche', model: '911', vin: 'WP0AA0911KS100001', seller_username: 'flat6fan', year_min: 1960,
        year_max: 1970, price_min: 100000, price_max: 150000, status: 'sold', source: 'bringatrailer', keyword: 'documented',
      };
      const misses: AuctionFilters = {
        make: 'BMW', model: '356', vin: 'WP0AA0911KS100002', seller_username: 'dealer_x', year_min: 1968, year_max: 1966,
        price_min: 145001, price_max: 144999, status: 'withdrawn', source: 'hemmings', keyword: 'roadster',
      };
      expect(await found('completed', completed)).toEqual(['p67']);
      for (const name of Object.keys(misses) as (keyof AuctionFilters)[]) {
        const filters = { ...completed, [name]: misses[name] };
        expect({ name, rows: await found('completed', filters) }).toEqual({ name, rows: [] });
        expect({ name, total: await repository.count('completed', filters) }).toEqual({ name, total: 0 });
      }

      const live: AuctionFilters = {
        make: 'Porsche', source: 'carsandbids', keyword: 'speedster', ending_after: '2030-01-01T00:00:00Z',
        ending_before: '2030-01-01T12:00:00Z', updated_since: '2026-01-01T08:00:00Z',
      };
      const liveMisses: AuctionFilters = {
        make: 'BMW', source: 'bringatrailer', keyword: 'gullwing', ending_after: '2030-01-01T12:00:00.000001Z',
        ending_before: '2030-01-01T11:59:59Z', updated_since: '2026-01-01T08:00:00.000001Z',
      };
      expect(await found('live', live)).toEqual(['l356']);
      for (const name of Object.keys(liveMisses) as (keyof AuctionFilters)[]) {
        const filters = { ...live, [name]: liveMisses[name] };
        expect({ name, rows: await found('live', filters) }).toEqual({ name, rows: [] });
      }
    });

    it('treats filter values as data, never as SQL', async () => {
      const hostile = `Porsche' OR '1'='1`;
      expect(await found('completed', { make: hostile })).toEqual([]);
      expect(await found('completed', { keyword: `'); DROP TABLE auctions; --` })).toEqual([]);
      expect(await repository.count('completed', {})).toBe(10);
    });

    it('counts and pages keywords the same through the indexes or row by row, as ILIKE would', async () => {
      const seeds = Object.entries(COMPLETED);
      const order: AuctionOrder = { sort: 'date', direction: 'desc' };
      for (const keyword of ['matching engine', 'gullwing it is', 'roadster.', 'Rudge wheels,', 'drivable.', 'atchin', 'engine, 100% doc', 's t', 'it', 'GT', '50% more']) {
        const k = keyword.toLowerCase();
        const matching = seeds
          .filter(([, s]) => `${s.title}`.toLowerCase().includes(k) || (s.description ?? '').toLowerCase().includes(k))
          .map(([name]) => name);
        const expected = expectedOrder('completed', order, (name) => matching.includes(name));
        expect({ keyword, total: await repository.count('completed', { keyword }) }).toEqual({ keyword, total: expected.length });
        for (const strategy of [undefined, 'walk', 'bitmap'] as const) {
          const rows = await repository.page({ scope: 'completed', filters: { keyword }, order, limit: 50 }, strategy);
          expect({ keyword, strategy, rows: names(rows) }).toEqual({ keyword, strategy, rows: expected });
        }
      }
    });
  });

  describe('order and paging', () => {
    const orders = (scope: AuctionScope): AuctionOrder[] =>
      (scope === 'live' ? LIVE_AUCTION_SORTS : AUCTION_SORTS).flatMap((sort) =>
        (['asc', 'desc'] as SortDirection[]).map((direction) => ({ sort, direction })),
      );

    it('sorts by each key in both directions, nulls last, ties by id in the direction of the sort', async () => {
      for (const scope of ['completed', 'live'] as const) {
        for (const order of orders(scope)) {
          const rows = await repository.page({ scope, filters: {}, order, limit: 100 });
          expect({ scope, order, rows: names(rows) }).toEqual({ scope, order, rows: expectedOrder(scope, order) });
        }
      }
      // Spot checks of the computed orders themselves.
      expect(expectedOrder('completed', { sort: 'price', direction: 'asc' }).slice(-1)).toEqual(['p89']);
      expect(expectedOrder('completed', { sort: 'bids', direction: 'desc' }).slice(0, 4)).toEqual(['dino', 'p73', 'pagoda', 'gull']);
    });

    it('skips `offset` rows of the order', async () => {
      const order: AuctionOrder = { sort: 'price', direction: 'asc' };
      const rows = await repository.page({ scope: 'completed', filters: { make: 'Porsche' }, order, limit: 2, offset: 2 });
      expect(names(rows)).toEqual(expectedOrder('completed', order, (n) => COMPLETED[n]?.ocd_make_name === undefined).slice(2, 4));
      expect(await repository.page({ scope: 'completed', filters: {}, order, limit: 5, offset: 10 })).toEqual([]);
    });

    it('continues strictly after a keyset position, into the nulls tail and through it, for every order', async () => {
      for (const scope of ['completed', 'live'] as const) {
        for (const order of orders(scope)) {
          for (const limit of [1, 2, 3]) {
            const seen: string[] = [];
            let after: KeysetPosition | undefined;
            for (let pages = 0; pages < 20; pages += 1) {
              const rows = await repository.page({ scope, filters: {}, order, limit, after });
              seen.push(...names(rows));
              if (rows.length < limit) break;
              const last = rows[rows.length - 1];
              after = { key: last.sort_key, id: last.id };
            }
            expect({ scope, order, limit, seen }).toEqual({ scope, order, limit, seen: expectedOrder(scope, order) });
          }
        }
      }
    });

    it('gives each row its sort value as text that a keyset position takes back', async () => {
      const [p67] = await repository.page({ scope: 'completed', filters: { vin: 'WP0AA0911KS100001' }, order: { sort: 'date', direction: 'desc' }, limit: 1 });
      expect(p67.sort_key).toBe('2025-06-01');
      const [priced] = await repository.page({ scope: 'completed', filters: { vin: 'WP0AA0911KS100001' }, order: { sort: 'price', direction: 'desc' }, limit: 1 });
      expect(priced.sort_key).toBe('145000');
      const [micro] = await repository.page({ scope: 'live', filters: { make: 'Jaguar' }, order: { sort: 'updated', direction: 'desc' }, limit: 1 });
      expect(micro.sort_key).toBe('2026-01-01T11:00:00.000002Z');
      const [endless] = await repository.page({ scope: 'live', filters: { make: 'Ferrari' }, order: { sort: 'ending', direction: 'asc' }, limit: 1 });
      expect(endless.sort_key).toBeNull();
    });

    it('serializes completed items without, and live items with, image_url and updated_at', async () => {
      const [completed] = await repository.page({ scope: 'completed', filters: { vin: 'WP0AA0911KS100001' }, order: { sort: 'date', direction: 'desc' }, limit: 1 });
      const item = JSON.parse(completed.item);
      expect(item).toMatchObject({ id: ids.p67, title: '1967 Porsche 911S Coupe', price: 145000, auction_end_at: '2025-06-02T02:00:00.000Z' });
      expect(item).not.toHaveProperty('updated_at');
      expect(item).not.toHaveProperty('image_url');
      const [live] = await repository.page({ scope: 'live', filters: { make: 'Porsche', model: '911' }, order: { sort: 'ending', direction: 'asc' }, limit: 1 });
      expect(JSON.parse(live.item)).toMatchObject({ id: ids.l911, updated_at: '2026-01-01T10:00:00.000Z', image_url: expect.stringMatching(/^https:/) });
    });
  });

  describe('totals and the data version', () => {
    it('brings the exact total of the filters, not of the keyset position, on every row', async () => {
      const order: AuctionOrder = { sort: 'ending', direction: 'asc' };
      const first = await repository.page({ scope: 'live', filters: { make: 'Porsche' }, order, limit: 1, with: 'total' });
      expect(names(first)).toEqual(['l356']);
      expect(first[0].total).toBe(2);
      const rest = await repository.page({
        scope: 'live', filters: { make: 'Porsche' }, order, limit: 5, with: 'total',
        after: { key: first[0].sort_key, id: first[0].id },
      });
      expect(names(rest)).toEqual(['l911']);
      expect(rest.map((row) => row.total)).toEqual([2]);
    });

    it('brings the data version on every row, and the version moves when the completed set changes', async () => {
      const state = await repository.dataState();
      const order: AuctionOrder = { sort: 'date', direction: 'desc' };
      const rows = await repository.page({ scope: 'completed', filters: { make: 'Porsche' }, order, limit: 3, with: 'data_version' });
      expect(rows).toHaveLength(3);
      expect(new Set(rows.map((row) => row.data_version))).toEqual(new Set([state.version]));

      const [added] = await insertAuctions(db, [{ title: 'A later Porsche', ocd_make_name: 'Porsche' }]);
      try {
        const after = await repository.dataState();
        expect(after.version).not.toBe(state.version);
        expect(await repository.count('completed', { make: 'Porsche' })).toBe(6);
        await db.query('ANALYZE auctions');
        expect((await repository.dataState()).rows).toBe(17);
      } finally {
        await db.query('DELETE FROM auctions WHERE id = $1', [added]);
      }
      expect((await repository.dataState()).version).not.toBe(state.version);
      expect(await repository.count('completed', { make: 'Porsche' })).toBe(5);
    });
  });
});
