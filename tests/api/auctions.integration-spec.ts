import { insertAuctions, insertBids, openTestDataSource, useIsolatedQueryEnvironment } from '@cars/testing';
import { DataSource } from 'typeorm';
import { JsonResponse, request } from './support/http';
import { startTestStack, TestStack } from './support/stack';

/**
 * GET /auctions, /auctions/live and /auctions/{auction_id}/bids through the gateway and the query
 * service over RabbitMQ, on rows of this spec's own database. Authentication is switched off
 * here (it has its own specs); one test below checks the routes are authenticated and metered.
 */

const AUCTION_FIELDS = [
  'id', 'source', 'url', 'title', 'auction_status', 'price', 'currency', 'auction_end_date', 'auction_end_at',
  'mileage', 'vin', 'title_status', 'city', 'state', 'zip', 'seller_username', 'year',
  'has_reserve', 'listing_make', 'listing_model', 'ocd_make_name', 'ocd_model_name', 'engine', 'drivetrain',
  'transmission', 'body_style', 'exterior_color', 'standard_exterior_color', 'interior_color',
  'standard_interior_color', 'seller_type', 'description', 'ownership_history', 'modifications', 'known_flaws',
  'recent_service_history', 'listing_details', 'created_at', 'featured_image_url', 'stats',
].sort();

// Setting up a database of its own and a stack takes a while on a busy machine.
jest.setTimeout(60_000);

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('auction routes through the gateway over RabbitMQ', () => {
  let env: { restore(): Promise<void> };
  let stack: TestStack;
  let db: DataSource;
  /** name → id of the rows below. */
  const ids: Record<string, number> = {};

  const get = (path: string): Promise<JsonResponse> => request(`${stack.url}${path}`);
  const idsOf = (res: JsonResponse): number[] => res.body.data.map((item: { id: number }) => item.id);
  const expectValidation = async (path: string, parameters: string[]) => {
    const res = await get(path);
    expect({ path, status: res.status }).toEqual({ path, status: 400 });
    expect(res.body.error).toBe('Validation Error');
    expect(Object.keys(res.body.details).sort()).toEqual([...parameters].sort());
    for (const name of parameters) expect(res.body.details[name].length).toBeGreaterThan(0);
    return res.body;
  };

  beforeAll(async () => {
    env = await useIsolatedQueryEnvironment('auctions');
    db = await openTestDataSource();
    const completed = {
      a911_67: { title: '1967 Porsche 911S Coupe', year: 1967, price: 145000, bid_count: 20, vin: 'WP0AA0911KS100001', seller_username: 'flat6fan', auction_end_date: '2025-06-01', auction_end_at: '2025-06-02T02:00:00Z', description: 'Numbers-matching engine, 100% documented.' },
      a911_73: { title: '1973 Porsche 911 Carrera RS', year: 1973, price: 210000, bid_count: 45, source: 'carsandbids', vin: 'wp0aa0911ks100001', seller_username: 'dealer_x', seller_type: 'dealer', auction_end_date: '2025-07-15', auction_end_at: '2025-07-15T19:00:00Z', description: 'Lightweight touring car.' },
      a356: { title: '1960 Porsche 356B Roadster', ocd_model_name: '356', listing_model: '356B', year: 1960, price: 95000, bid_count: 12, source: 'pcarmarket', auction_status: 'reserve not met', source_status: 'reserve not met', auction_end_date: '2024-11-02', auction_end_at: '2024-11-02T20:00:00Z', description: 'Restored roadster.' },
      a911_89: { title: '1989 Porsche 911 Speedster', year: 1989, price: null, bid_count: null, source: 'hemmings', auction_status: 'withdrawn', source_status: 'withdrawn', auction_end_date: '2025-01-10', auction_end_at: null, description: 'Withdrawn before the end.' },
      dino: { title: '1972 Ferrari Dino 246 GT', ocd_make_name: 'Ferrari', listing_make: 'Ferrari', ocd_model_name: 'Dino 246', listing_model: 'Dino', year: 1972, price: 400000, currency: 'GBP', mileage_unit: 'km', country_code: 'GB', source: 'collectingcars', bid_count: 60, auction_end_date: '2025-03-03', auction_end_at: '2025-03-03T18:00:00Z', description: 'Ferrari Classiche certified.' },
      gullwing: { title: '1955 Mercedes-Benz 300SL GULLWING', ocd_make_name: 'Mercedes-Benz', listing_make: 'Mercedes', ocd_model_name: '300SL', year: 1955, price: 1500000, source: 'hagerty', bid_count: 30, auction_end_date: '2025-05-05', auction_end_at: '2025-05-05T17:00:00Z', description: 'Rudge wheels.' },
      pagoda: { title: '1969 Mercedes-Benz 280SL Pagoda', ocd_make_name: 'Mercedes-Benz', ocd_model_name: '280SL', year: 1969, price: 120000, auction_status: 'bid to', source_status: 'reserve not met', bid_count: 30, auction_end_date: '2025-05-05', auction_end_at: '2025-05-05T17:00:00Z', description: 'A gullwing it is not.' },
      m3: { title: '1988 BMW M3', ocd_make_name: 'BMW', ocd_model_name: 'M3', year: 1988, price: 80000, currency: 'EUR', source: 'carandclassic', auction_status: 'canceled', source_status: 'canceled', bid_count: 5, auction_end_date: '2024-02-20', auction_end_at: null, description: 'E30 with a_b underscores.' },
      giulia: { title: 'Alfa Romeo Giulia Sprint', ocd_make_name: 'Alfa Romeo', ocd_model_name: 'Giulia', year: null, price: 30000, auction_status: 'unknown', source_status: 'result unavailable', bid_count: 3, auction_end_date: null, auction_end_at: null, description: null },
      a911_tie: { title: '1995 Porsche 911 Carrera', year: 1995, price: 145000, bid_count: 20, auction_end_date: '2025-06-01', auction_end_at: '2025-06-01T19:00:00Z', seller_username: 'flat6fan', description: 'Same day as the 1967 car.' },
      boxster: { title: '2000 Porsche Boxster', ocd_model_name: 'Boxster', year: 2000, price: 20000, seller_username: 'flat6fan', bid_count: 9, auction_end_date: '2023-09-09', auction_end_at: '2023-09-09T19:00:00Z', modifications: ['IMS bearing'], known_flaws: ['Cracked bumper'], recent_service_history: ['Oil change'], listing_details: ['Manual'] },
    };
    const live = {
      live911: { title: '1970 Porsche 911T', year: 1970, price: 80000, bid_count: 15, auction_end_at: '2030-01-01T18:00:00Z', auction_end_date: '2030-01-01', updated_at: '2026-01-01T10:00:00Z', created_at: '2025-12-20T00:00:00Z' },
      liveM3: { title: '1990 BMW M3 Sport Evolution', ocd_make_name: 'BMW', ocd_model_name: 'M3', year: 1990, price: 120000, bid_count: 30, source: 'carsandbids', auction_end_at: '2030-01-02T18:00:00Z', auction_end_date: '2030-01-02', updated_at: '2026-01-01T12:00:00Z', created_at: '2025-12-22T00:00:00Z' },
      live356: { title: '1958 Porsche 356A Speedster', ocd_model_name: '356', year: 1958, price: 150000, bid_count: 25, source: 'carsandbids', auction_end_at: '2030-01-01T12:00:00Z', auction_end_date: '2030-01-01', updated_at: '2026-01-01T08:00:00Z', created_at: '2025-12-21T00:00:00Z' },
      liveNoEnd: { title: '1965 Ferrari 275 GTB', ocd_make_name: 'Ferrari', ocd_model_name: '275 GTB', year: 1965, price: null, bid_count: 0, auction_end_at: null, auction_end_date: null, updated_at: '2026-01-01T09:00:00Z', created_at: '2025-12-23T00:00:00Z' },
    };
    const names = [...Object.keys(completed), ...Object.keys(live)];
    const rows = [
      ...Object.values(completed),
      ...Object.values(live).map((row) => ({ ...row, is_live: true })),
    ];
    const inserted = await insertAuctions(db, rows);
    names.forEach((name, i) => (ids[name] = inserted[i]));
    await insertBids(db, ids.live911, [
      { bidder_name: 'b1', amount: 50000, bid_at: '2025-12-28T10:00:00Z', created_at: '2025-12-28T10:00:05Z' },
      { bidder_name: 'b2', amount: 60000, bid_at: '2025-12-29T10:00:00Z', created_at: '2025-12-29T10:00:05Z' },
      { bidder_name: 'b3', amount: 80000, bid_at: '2025-12-31T10:00:00Z', created_at: '2025-12-30T10:00:05Z' },
      { bidder_name: 'b1', amount: 70000, bid_at: '2025-12-30T10:00:00Z', created_at: '2025-12-31T10:00:05Z' },
      { bidder_name: 'unknown-time', amount: null, bid_at: null, created_at: '2026-01-01T00:00:00Z' },
    ]);
    stack = await startTestStack({ access: { enabled: false } });
  });

  afterAll(async () => {
    await stack?.close();
    await db?.destroy();
    await env?.restore();
  });

  describe('GET /auctions', () => {
    it('lists completed auctions only, most recent first, with an exact total', async () => {
      const res = await get('/auctions');
      expect(res.status).toBe(200);
      expect(res.body.meta).toEqual({ total: 11, page: 1, limit: 50, total_pages: 1, has_more: false, next_cursor: null });
      // date desc, ties by id desc, the auction without an end date last.
      expect(idsOf(res)).toEqual([
        ids.a911_73, ids.a911_tie, ids.a911_67, ids.pagoda, ids.gullwing, ids.dino, ids.a911_89, ids.a356, ids.m3,
        ids.boxster, ids.giulia,
      ]);
    });

    it('gives every contract field with its type, plus mileage_unit and country_code', async () => {
      const res = await get(`/auctions?vin=WP0AA0911KS100001`);
      const [item] = res.body.data;
      expect(Object.keys(item).sort()).toEqual([...AUCTION_FIELDS, 'country_code', 'mileage_unit'].sort());
      expect(item).toMatchObject({
        id: ids.a911_67,
        source: 'bringatrailer',
        title: '1967 Porsche 911S Coupe',
        auction_status: 'sold',
        price: 145000,
        currency: 'USD',
        auction_end_date: '2025-06-01',
        auction_end_at: '2025-06-02T02:00:00.000Z',
        mileage: 52000,
        mileage_unit: 'mi',
        vin: 'WP0AA0911KS100001',
        year: 1967,
        has_reserve: true,
        ocd_make_name: 'Porsche',
        ocd_model_name: '911',
        modifications: [],
        known_flaws: [],
        recent_service_history: [],
        listing_details: [],
        stats: { views: 1000, watches: 100, likes: 10, bids: 20, unique_bidder_count: 8 },
      });
      expect(item.created_at).toMatch(ISO_UTC);
      expect(item).not.toHaveProperty('image_url');
      expect(item).not.toHaveProperty('updated_at');

      const boxster = (await get('/auctions?make=Porsche&model=Boxster')).body.data[0];
      expect(boxster).toMatchObject({
        modifications: ['IMS bearing'],
        known_flaws: ['Cracked bumper'],
        recent_service_history: ['Oil change'],
        listing_details: ['Manual'],
      });
      const giulia = (await get('/auctions?make=Alfa%20Romeo')).body.data[0];
      expect(giulia).toMatchObject({ year: null, auction_end_date: null, auction_end_at: null, description: null });
      const withdrawn = (await get('/auctions?status=withdrawn')).body.data[0];
      expect(withdrawn).toMatchObject({ price: null, stats: { bids: null } });
    });

    it('filters by exact make and model', async () => {
      expect(idsOf(await get('/auctions?make=Porsche&sort=year&direction=asc'))).toEqual([
        ids.a356, ids.a911_67, ids.a911_73, ids.a911_89, ids.a911_tie, ids.boxster,
      ]);
      expect((await get('/auctions?make=porsche')).body.meta.total).toBe(0);
      expect((await get('/auctions?make=Porsch')).body.meta.total).toBe(0);
      expect(idsOf(await get('/auctions?make=Porsche&model=356'))).toEqual([ids.a356]);
      expect(idsOf(await get('/auctions?make=Mercedes-Benz&model=300SL'))).toEqual([ids.gullwing]);
    });

    it('matches vin exactly and case-sensitively, and seller_username exactly', async () => {
      expect(idsOf(await get('/auctions?vin=WP0AA0911KS100001'))).toEqual([ids.a911_67]);
      expect(idsOf(await get('/auctions?vin=wp0aa0911ks100001'))).toEqual([ids.a911_73]);
      expect((await get('/auctions?vin=WP0AA0911KS10000')).body.meta.total).toBe(0);
      expect(idsOf(await get('/auctions?seller_username=flat6fan'))).toEqual([ids.a911_tie, ids.a911_67, ids.boxster]);
      expect((await get('/auctions?seller_username=FLAT6FAN')).body.meta.total).toBe(0);
    });

    it('accepts model without make when vin or seller_username is given', async () => {
      expect(idsOf(await get('/auctions?seller_username=flat6fan&model=Boxster'))).toEqual([ids.boxster]);
      expect(idsOf(await get('/auctions?vin=wp0aa0911ks100001&model=911'))).toEqual([ids.a911_73]);
    });

    it('applies inclusive year and price bounds', async () => {
      expect(idsOf(await get('/auctions?year_min=1967&year_max=1972&sort=year&direction=asc'))).toEqual([
        ids.a911_67, ids.pagoda, ids.dino,
      ]);
      expect(idsOf(await get('/auctions?year_min=1995'))).toEqual([ids.a911_tie, ids.boxster]);
      expect(idsOf(await get('/auctions?price_min=145000&price_max=400000&sort=price&direction=asc'))).toEqual([
        ids.a911_67, ids.a911_tie, ids.a911_73, ids.dino,
      ]);
      expect(idsOf(await get('/auctions?price_max=30000&sort=price'))).toEqual([ids.giulia, ids.boxster]);
      expect(idsOf(await get('/auctions?year_min=1967&year_max=1967'))).toEqual([ids.a911_67]);
    });

    it('filters by status (including values with spaces) and source', async () => {
      expect(idsOf(await get('/auctions?status=bid%20to'))).toEqual([ids.pagoda]);
      expect(idsOf(await get('/auctions?status=bid+to'))).toEqual([ids.pagoda]);
      expect(idsOf(await get('/auctions?status=reserve%20not%20met'))).toEqual([ids.a356]);
      expect(idsOf(await get('/auctions?status=canceled'))).toEqual([ids.m3]);
      expect(idsOf(await get('/auctions?status=unknown'))).toEqual([ids.giulia]);
      expect((await get('/auctions?status=sold')).body.meta.total).toBe(6);
      expect(idsOf(await get('/auctions?source=collectingcars'))).toEqual([ids.dino]);
      expect(idsOf(await get('/auctions?source=carsandbids'))).toEqual([ids.a911_73]);
      expect((await get('/auctions?source=bringatrailer')).body.meta.total).toBe(5);
    });

    it('searches title and description case-insensitively, with LIKE wildcards taken literally', async () => {
      expect(idsOf(await get('/auctions?keyword=gullwing'))).toEqual([ids.pagoda, ids.gullwing].sort((a, b) => b - a));
      expect(idsOf(await get('/auctions?keyword=GULLWING&make=Mercedes-Benz&model=300SL'))).toEqual([ids.gullwing]);
      expect(idsOf(await get('/auctions?keyword=classiche'))).toEqual([ids.dino]);
      expect(idsOf(await get('/auctions?keyword=%20%20dino%20'))).toEqual([ids.dino]);
      expect(idsOf(await get('/auctions?keyword=100%25'))).toEqual([ids.a911_67]);
      expect(idsOf(await get('/auctions?keyword=a_b'))).toEqual([ids.m3]);
      expect((await get('/auctions?keyword=a%25b')).body.meta.total).toBe(0);
      expect((await get('/auctions?keyword=Speedster')).body.meta.total).toBe(1);
    });

    it('finds any substring of a description, inside words and across them, as ILIKE would', async () => {
      // 'Numbers-matching engine, 100% documented.' (and the factory's 'A numbers-matching 911S with a rebuilt engine.')
      expect(idsOf(await get('/auctions?keyword=atchin'))).toEqual([ids.a911_67, ids.boxster]); // by date, newest first
      expect(idsOf(await get('/auctions?keyword=ocumente'))).toEqual([ids.a911_67]);
      expect(idsOf(await get('/auctions?keyword=NUMBERS-MATCHING%20ENGINE'))).toEqual([ids.a911_67]);
      expect(idsOf(await get('/auctions?keyword=ngine%2C%20100%25%20doc'))).toEqual([ids.a911_67]);
      expect(idsOf(await get('/auctions?keyword=engine%2C%20100%25%20doc'))).toEqual([ids.a911_67]);
      // Every count agrees with ILIKE over the whole table (one fragment: the token lookup alone;
      // several: rechecked; fragments under 3 characters are not looked up).
      const keywords = ['engine 100', 'matching  engine', 'gullwing it is', 'roadster.', 'wheels', 'Rudge wheels.', 'OADST', 'it 100%'];
      for (const keyword of keywords) {
        const [{ n }] = await db.query(
          `SELECT count(*)::int AS n FROM auctions WHERE NOT is_live AND (title ILIKE $1 OR description ILIKE $1)`,
          [`%${keyword}%`],
        );
        expect({ keyword, total: (await get(`/auctions?keyword=${encodeURIComponent(keyword)}&limit=100`)).body.meta.total }).toEqual({ keyword, total: n });
      }
    });

    it('finds words that reach descriptions after the first write, by insert or update', async () => {
      const [added] = await insertAuctions(db, [{ title: 'Plain title', description: 'Finished in Quetzalcoatl green.' }]);
      try {
        expect(idsOf(await get('/auctions?keyword=zalcoat'))).toEqual([added]);
        await db.query(`UPDATE auctions SET description = 'Now in Xochipilli orange.' WHERE id = $1`, [added]);
        expect(idsOf(await get('/auctions?keyword=xochipilli%20or'))).toEqual([added]);
        expect((await get('/auctions?keyword=zalcoat')).body.meta.total).toBe(0);
      } finally {
        await db.query(`DELETE FROM auctions WHERE id = $1`, [added]);
      }
    });

    it('sorts by each key in both directions, nulls last, ties by id', async () => {
      const priceDesc = idsOf(await get('/auctions?sort=price'));
      expect(priceDesc).toEqual([
        ids.gullwing, ids.dino, ids.a911_73, ids.a911_tie, ids.a911_67, ids.pagoda, ids.a356, ids.m3, ids.giulia,
        ids.boxster, ids.a911_89,
      ]);
      const priceAsc = idsOf(await get('/auctions?sort=price&direction=asc'));
      expect(priceAsc).toEqual([
        ids.boxster, ids.giulia, ids.m3, ids.a356, ids.pagoda, ids.a911_67, ids.a911_tie, ids.a911_73, ids.dino,
        ids.gullwing, ids.a911_89,
      ]);
      const yearDesc = idsOf(await get('/auctions?sort=year&direction=desc'));
      expect(yearDesc[0]).toBe(ids.boxster);
      expect(yearDesc[yearDesc.length - 1]).toBe(ids.giulia);
      const bidsDesc = idsOf(await get('/auctions?sort=bids'));
      expect(bidsDesc.slice(0, 2)).toEqual([ids.dino, ids.a911_73]);
      // gullwing and pagoda both have 30 bids: id desc.
      expect(bidsDesc.slice(2, 4)).toEqual([ids.pagoda, ids.gullwing]);
      expect(bidsDesc[bidsDesc.length - 1]).toBe(ids.a911_89);
      const dateAsc = idsOf(await get('/auctions?sort=date&direction=asc'));
      expect(dateAsc.slice(0, 2)).toEqual([ids.boxster, ids.m3]);
      expect(dateAsc[dateAsc.length - 1]).toBe(ids.giulia);
      // ties by id in the direction of the sort
      const i67 = dateAsc.indexOf(ids.a911_67);
      expect(dateAsc[i67 + 1]).toBe(ids.a911_tie);
    });

    it('pages with page and limit without repeating or skipping an item', async () => {
      const all = idsOf(await get('/auctions?sort=bids&direction=asc'));
      const seen: number[] = [];
      for (let page = 1; page <= 4; page += 1) {
        const res = await get(`/auctions?sort=bids&direction=asc&limit=3&page=${page}`);
        expect(res.body.meta).toMatchObject({ total: 11, page, limit: 3, total_pages: 4, has_more: page < 4 });
        expect(res.body.meta.next_cursor === null).toBe(page === 4);
        seen.push(...idsOf(res));
      }
      expect(seen).toEqual(all);
      const beyond = await get('/auctions?limit=3&page=5');
      expect(beyond.status).toBe(200);
      expect(beyond.body).toEqual({
        data: [],
        meta: { total: 11, page: 5, limit: 3, total_pages: 4, has_more: false, next_cursor: null },
      });
      const huge = await get('/auctions?limit=100&page=2147483647');
      expect(huge.body.data).toEqual([]);
      expect(huge.body.meta.total).toBe(11);
    });

    it('pages with cursors through the same items as page mode, for every sort and direction', async () => {
      for (const sort of ['date', 'price', 'year', 'bids']) {
        for (const direction of ['asc', 'desc']) {
          const base = `/auctions?sort=${sort}&direction=${direction}`;
          const expected = idsOf(await get(base));
          const seen: number[] = [];
          let url = `${base}&pagination=cursor&limit=2`;
          for (let page = 1; ; page += 1) {
            const res = await get(url);
            expect(res.status).toBe(200);
            expect(res.body.meta).toMatchObject({ total: 11, page, limit: 2, total_pages: 6 });
            seen.push(...idsOf(res));
            if (!res.body.meta.has_more) {
              expect(res.body.meta.next_cursor).toBeNull();
              break;
            }
            expect(typeof res.body.meta.next_cursor).toBe('string');
            url = `${base}&pagination=cursor&limit=2&cursor=${encodeURIComponent(res.body.meta.next_cursor)}`;
            expect(page).toBeLessThan(10);
          }
          expect({ sort, direction, seen }).toEqual({ sort, direction, seen: expected });
        }
      }
    });

    it('rejects a tampered cursor, one from other filters or order, and mixed paging modes', async () => {
      const first = await get('/auctions?make=Porsche&pagination=cursor&limit=2');
      const cursor: string = first.body.meta.next_cursor;
      const [payload, mac] = cursor.split('.');
      const edited = Buffer.from(
        JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), o: 0 }),
      ).toString('base64url');
      const body = await expectValidation(`/auctions?make=Porsche&pagination=cursor&limit=2&cursor=${edited}.${mac}`, ['cursor']);
      expect(body.message).toContain('cursor');
      await expectValidation(`/auctions?make=Ferrari&pagination=cursor&cursor=${cursor}`, ['cursor']);
      await expectValidation(`/auctions?make=Porsche&sort=price&pagination=cursor&cursor=${cursor}`, ['cursor']);
      await expectValidation(`/auctions?make=Porsche&direction=asc&pagination=cursor&cursor=${cursor}`, ['cursor']);
      await expectValidation(`/auctions?make=Porsche&pagination=cursor&cursor=not-a-cursor`, ['cursor']);
      await expectValidation(`/auctions?make=Porsche&pagination=cursor&page=2`, ['page']);
      await expectValidation(`/auctions?make=Porsche&limit=2&page=2&cursor=${cursor}`, ['page']);
      await expectValidation(`/auctions?make=Porsche&pagination=page&cursor=${cursor}`, ['cursor']);
      await expectValidation(`/auctions?pagination=pages`, ['pagination']);
      // A cursor alone means cursor mode: the same page as with pagination=cursor.
      const implied = await get(`/auctions?make=Porsche&limit=2&cursor=${cursor}`);
      expect(implied.status).toBe(200);
      expect(implied.body).toEqual((await get(`/auctions?make=Porsche&pagination=cursor&limit=2&cursor=${cursor}`)).body);
      // The same cursor with the same query works, also with another limit.
      const again = await get(`/auctions?make=Porsche&pagination=cursor&limit=2&cursor=${cursor}`);
      expect(again.status).toBe(200);
      expect(idsOf(again)).toHaveLength(2);
    });

    it('answers 400 naming each bad parameter, before touching the database', async () => {
      await expectValidation('/auctions?limit=0', ['limit']);
      await expectValidation('/auctions?limit=101', ['limit']);
      await expectValidation('/auctions?limit=ten', ['limit']);
      await expectValidation('/auctions?limit=1.5', ['limit']);
      await expectValidation('/auctions?page=0', ['page']);
      await expectValidation('/auctions?page=-1', ['page']);
      await expectValidation('/auctions?page=', ['page']);
      await expectValidation('/auctions?year_min=abc', ['year_min']);
      await expectValidation('/auctions?year_max=100000', ['year_max']);
      await expectValidation('/auctions?price_min=-5', ['price_min']);
      await expectValidation('/auctions?price_max=1e6', ['price_max']);
      await expectValidation('/auctions?year_min=1990&year_max=1980', ['year_min']);
      await expectValidation('/auctions?price_min=200&price_max=100', ['price_min']);
      await expectValidation('/auctions?status=sold%20out', ['status']);
      await expectValidation('/auctions?status=Sold', ['status']);
      await expectValidation('/auctions?source=ebay', ['source']);
      await expectValidation('/auctions?sort=ending', ['sort']);
      await expectValidation('/auctions?direction=up', ['direction']);
      await expectValidation('/auctions?make=', ['make']);
      await expectValidation('/auctions?vin=', ['vin']);
      await expectValidation('/auctions?seller_username=', ['seller_username']);
      await expectValidation('/auctions?keyword=%20%20', ['keyword']);
      await expectValidation(`/auctions?keyword=${'x'.repeat(101)}`, ['keyword']);
      await expectValidation('/auctions?make=Porsche&make=BMW', ['make']);
      const typo = await expectValidation('/auctions?mkae=Porsche', ['mkae']);
      expect(typo.details.mkae).toEqual(['mkae is not a recognised parameter']);
      await expectValidation('/auctions?ending_after=2025-01-01T00:00:00Z', ['ending_after']);
      const model = await expectValidation('/auctions?model=911', ['model']);
      expect(model.details.model[0]).toContain('make');
      const many = await expectValidation('/auctions?limit=0&page=0&status=x&model=911&foo=1', [
        'limit', 'page', 'status', 'model', 'foo',
      ]);
      expect(many.message).toContain('limit');
    });
  });

  describe('GET /auctions/live', () => {
    it('lists live auctions only, ending soonest first, with image_url and updated_at', async () => {
      const res = await get('/auctions/live');
      expect(res.status).toBe(200);
      expect(res.body.meta).toEqual({ total: 4, page: 1, limit: 50, total_pages: 1, has_more: false, next_cursor: null });
      expect(idsOf(res)).toEqual([ids.live356, ids.live911, ids.liveM3, ids.liveNoEnd]);
      const item = res.body.data[1];
      expect(Object.keys(item).sort()).toEqual(
        [...AUCTION_FIELDS, 'country_code', 'mileage_unit', 'image_url', 'updated_at'].sort(),
      );
      expect(item.image_url).toBe(item.featured_image_url);
      expect(item.updated_at).toBe('2026-01-01T10:00:00.000Z');
      expect(item.auction_end_at).toBe('2030-01-01T18:00:00.000Z');
      expect(item.stats).toEqual({ views: 1000, watches: 100, likes: 10, bids: 15, unique_bidder_count: 8 });
    });

    it('filters by the live sources only; other platforms are a 400', async () => {
      expect(idsOf(await get('/auctions/live?source=carsandbids'))).toEqual([ids.live356, ids.liveM3]);
      expect(idsOf(await get('/auctions/live?source=bringatrailer'))).toEqual([ids.live911, ids.liveNoEnd]);
      const body = await expectValidation('/auctions/live?source=hemmings', ['source']);
      expect(body.details.source[0]).toContain('bringatrailer, carsandbids');
    });

    it('applies the shared filters', async () => {
      expect(idsOf(await get('/auctions/live?make=Porsche'))).toEqual([ids.live356, ids.live911]);
      expect(idsOf(await get('/auctions/live?make=BMW&model=M3'))).toEqual([ids.liveM3]);
      expect(idsOf(await get('/auctions/live?year_max=1965'))).toEqual([ids.live356, ids.liveNoEnd]);
      expect(idsOf(await get('/auctions/live?price_min=100000'))).toEqual([ids.live356, ids.liveM3]);
      expect(idsOf(await get('/auctions/live?keyword=speedster'))).toEqual([ids.live356]);
      await expectValidation('/auctions/live?model=M3', ['model']);
      await expectValidation('/auctions/live?status=sold', ['status']);
    });

    it('bounds end and update times inclusively', async () => {
      expect(idsOf(await get('/auctions/live?ending_after=2030-01-01T18:00:00Z'))).toEqual([ids.live911, ids.liveM3]);
      expect(idsOf(await get('/auctions/live?ending_before=2030-01-01T18:00:00Z'))).toEqual([ids.live356, ids.live911]);
      expect(
        idsOf(await get('/auctions/live?ending_after=2030-01-01T13:00:00%2B01:00&ending_before=2030-01-01T12:00:00Z')),
      ).toEqual([ids.live356]);
      // An unencoded "+" arrives as a space: still understood.
      expect(idsOf(await get('/auctions/live?ending_after=2030-01-01T13:00:00+01:00&ending_before=2030-01-01T12:00:00Z'))).toEqual([
        ids.live356,
      ]);
      expect(idsOf(await get('/auctions/live?ending_after=2030-01-02'))).toEqual([ids.liveM3]);
      expect(idsOf(await get('/auctions/live?updated_since=2026-01-01T10:00:00Z&sort=updated'))).toEqual([
        ids.live911, ids.liveM3,
      ]);
      expect(idsOf(await get('/auctions/live?updated_since=2026-01-01T10:00:00.001Z'))).toEqual([ids.liveM3]);
    });

    it('rejects malformed or ambiguous date-times and empty windows', async () => {
      await expectValidation('/auctions/live?ending_after=tomorrow', ['ending_after']);
      await expectValidation('/auctions/live?ending_after=2030-01-01T18:00:00', ['ending_after']);
      await expectValidation('/auctions/live?ending_before=2030-02-30T00:00:00Z', ['ending_before']);
      await expectValidation('/auctions/live?updated_since=2030-01-01T25:00:00Z', ['updated_since']);
      await expectValidation('/auctions/live?updated_since=1700000000', ['updated_since']);
      await expectValidation(
        '/auctions/live?ending_after=2030-01-02T00:00:00Z&ending_before=2030-01-01T00:00:00Z',
        ['ending_after'],
      );
      await expectValidation('/auctions/live?sort=date', ['sort']);
    });

    it('sorts by each live key, nulls last', async () => {
      expect(idsOf(await get('/auctions/live?direction=desc'))).toEqual([ids.liveM3, ids.live911, ids.live356, ids.liveNoEnd]);
      expect(idsOf(await get('/auctions/live?sort=created'))).toEqual([ids.live911, ids.live356, ids.liveM3, ids.liveNoEnd]);
      expect(idsOf(await get('/auctions/live?sort=updated&direction=desc'))).toEqual([
        ids.liveM3, ids.live911, ids.liveNoEnd, ids.live356,
      ]);
      expect(idsOf(await get('/auctions/live?sort=price&direction=desc'))).toEqual([ids.live356, ids.liveM3, ids.live911, ids.liveNoEnd]);
      expect(idsOf(await get('/auctions/live?sort=price'))).toEqual([ids.live911, ids.liveM3, ids.live356, ids.liveNoEnd]);
      expect(idsOf(await get('/auctions/live?sort=year'))).toEqual([ids.live356, ids.liveNoEnd, ids.live911, ids.liveM3]);
      expect(idsOf(await get('/auctions/live?sort=bids&direction=desc'))).toEqual([ids.liveM3, ids.live356, ids.live911, ids.liveNoEnd]);
    });

    it('pages with cursors', async () => {
      const first = await get('/auctions/live?pagination=cursor&limit=3');
      expect(first.body.meta).toMatchObject({ total: 4, page: 1, limit: 3, total_pages: 2, has_more: true });
      const second = await get(`/auctions/live?pagination=cursor&limit=3&cursor=${first.body.meta.next_cursor}`);
      expect(second.body.meta).toMatchObject({ total: 4, page: 2, has_more: false, next_cursor: null });
      expect([...idsOf(first), ...idsOf(second)]).toEqual([ids.live356, ids.live911, ids.liveM3, ids.liveNoEnd]);
      // A cursor of /auctions is not one of /auctions/live.
      const completed = await get('/auctions?pagination=cursor&limit=1');
      await expectValidation(`/auctions/live?pagination=cursor&cursor=${completed.body.meta.next_cursor}`, ['cursor']);
    });
  });

  describe('GET /auctions/{auction_id}/bids', () => {
    it('lists the bids oldest first with every contract field, bids without a time last', async () => {
      const res = await get(`/auctions/${ids.live911}/bids`);
      expect(res.status).toBe(200);
      expect(res.body.meta).toEqual({ total: 5, page: 1, limit: 100, total_pages: 1, has_more: false, next_cursor: null });
      expect(res.body.data.map((b: { bidder_name: string }) => b.bidder_name)).toEqual(['b1', 'b2', 'b1', 'b3', 'unknown-time']);
      const [bid] = res.body.data;
      expect(Object.keys(bid).sort()).toEqual(['amount', 'auction_id', 'bid_at', 'bidder_name', 'created_at', 'currency', 'id']);
      expect(bid).toMatchObject({
        auction_id: ids.live911,
        amount: 50000,
        currency: 'USD',
        bid_at: '2025-12-28T10:00:00.000Z',
        created_at: '2025-12-28T10:00:05.000Z',
      });
      expect(Number.isInteger(bid.id)).toBe(true);
      expect(res.body.data[4]).toMatchObject({ amount: null, bid_at: null });
    });

    it('bounds bid_at inclusively, sorts and pages', async () => {
      const amounts = (res: JsonResponse) => res.body.data.map((b: { amount: number }) => b.amount);
      expect(amounts(await get(`/auctions/${ids.live911}/bids?bid_after=2025-12-29T10:00:00Z&bid_before=2025-12-30T10:00:00Z`))).toEqual([60000, 70000]);
      expect(amounts(await get(`/auctions/${ids.live911}/bids?sort=amount&direction=desc`))).toEqual([80000, 70000, 60000, 50000, null]);
      expect(amounts(await get(`/auctions/${ids.live911}/bids?sort=amount`))).toEqual([50000, 60000, 70000, 80000, null]);
      expect(amounts(await get(`/auctions/${ids.live911}/bids?sort=created&direction=desc`))).toEqual([null, 70000, 80000, 60000, 50000]);
      const page2 = await get(`/auctions/${ids.live911}/bids?limit=2&page=2`);
      expect(page2.body.meta).toMatchObject({ total: 5, page: 2, limit: 2, total_pages: 3, has_more: true });
      expect(amounts(page2)).toEqual([70000, 80000]);
    });

    it('answers an auction without bids with an empty page, and an unknown one with 404', async () => {
      const empty = await get(`/auctions/${ids.a911_67}/bids`);
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual({
        data: [],
        meta: { total: 0, page: 1, limit: 100, total_pages: 0, has_more: false, next_cursor: null },
      });
      const missing = await get('/auctions/999999999/bids');
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ error: 'Not Found', message: 'No auction with id 999999999' });
      expect((await get('/auctions/9223372036854775807/bids')).status).toBe(404);
    });

    it('answers 400 for a bad auction id or parameter', async () => {
      await expectValidation('/auctions/abc/bids', ['auction_id']);
      await expectValidation('/auctions/0/bids', ['auction_id']);
      await expectValidation('/auctions/-3/bids', ['auction_id']);
      await expectValidation('/auctions/1.5/bids', ['auction_id']);
      await expectValidation('/auctions/9223372036854775808/bids', ['auction_id']);
      await expectValidation(`/auctions/${ids.live911}/bids?limit=101`, ['limit']);
      await expectValidation(`/auctions/${ids.live911}/bids?sort=price`, ['sort']);
      await expectValidation(`/auctions/${ids.live911}/bids?bid_after=yesterday`, ['bid_after']);
      await expectValidation(`/auctions/${ids.live911}/bids?bid_after=2026-01-02&bid_before=2026-01-01`, ['bid_after']);
      await expectValidation(`/auctions/${ids.live911}/bids?pagination=cursor&page=2`, ['page']);
      await expectValidation(`/auctions/${ids.live911}/bids?pagination=pages`, ['pagination']);
      await expectValidation(`/auctions/${ids.live911}/bids?cursor=not-a-cursor`, ['cursor']);
      await expectValidation(`/auctions/${ids.live911}/bids?make=Porsche`, ['make']);
    });
  });

  describe('a cursor on every page', () => {
    /** Starts in page mode (no pagination parameter) and follows meta.next_cursor to the end. */
    const followFromFirstPage = async (path: string, limit: number) => {
      const sep = path.includes('?') ? '&' : '?';
      let res = await get(`${path}${sep}limit=${limit}`);
      expect(res.status).toBe(200);
      const total: number = res.body.meta.total;
      const seen: number[] = [];
      for (let pages = 1; ; pages += 1) {
        seen.push(...idsOf(res));
        expect(res.body.meta.has_more).toBe(seen.length < total);
        if (!res.body.meta.has_more) {
          expect(res.body.meta.next_cursor).toBeNull();
          break;
        }
        expect(pages).toBeLessThan(total + 1);
        res = await get(`${path}${sep}limit=${limit}&cursor=${encodeURIComponent(res.body.meta.next_cursor)}`);
        expect(res.status).toBe(200);
      }
      return { total, seen };
    };

    it('lets a client that never sends pagination=cursor read every item of /auctions, /auctions/live and bids', async () => {
      for (const [path, expectedTotal] of [
        ['/auctions', 11],
        ['/auctions?make=Porsche&sort=price', 6],
        ['/auctions/live', 4],
        [`/auctions/${ids.live911}/bids`, 5],
        [`/auctions/${ids.live911}/bids?sort=amount&direction=desc`, 5],
      ] as const) {
        const { total, seen } = await followFromFirstPage(path, 2);
        expect({ path, total }).toEqual({ path, total: expectedTotal });
        expect({ path, distinct: new Set(seen).size, count: seen.length }).toEqual({ path, distinct: total, count: total });
      }
    });

    it('carries has_more and next_cursor on page-mode pages, null on the last one', async () => {
      const middle = await get('/auctions?limit=4&page=2');
      expect(middle.body.meta).toMatchObject({ total: 11, page: 2, has_more: true });
      expect(typeof middle.body.meta.next_cursor).toBe('string');
      // The cursor of page 2 leads to page 3 of page mode.
      const third = await get(`/auctions?limit=4&cursor=${encodeURIComponent(middle.body.meta.next_cursor)}`);
      expect(idsOf(third)).toEqual(idsOf(await get('/auctions?limit=4&page=3')));
      expect(third.body.meta).toMatchObject({ page: 3, has_more: false, next_cursor: null });
      const bidsLast = await get(`/auctions/${ids.live911}/bids?limit=5`);
      expect(bidsLast.body.meta).toMatchObject({ total: 5, has_more: false, next_cursor: null });
      const bidsFirst = await get(`/auctions/${ids.live911}/bids?limit=2`);
      await expectValidation(`/auctions/${ids.liveM3}/bids?limit=2&cursor=${bidsFirst.body.meta.next_cursor}`, ['cursor']);
    });
  });

  describe('strict parameters', () => {
    it('refuses an unknown parameter on the routes that take none, naming it', async () => {
      const makes = await expectValidation('/makes?colour=red', ['colour']);
      expect(makes.details.colour).toEqual(['colour is not a recognised parameter']);
      await expectValidation('/models?make=Porsche&colour=red', ['colour']);
      await expectValidation('/health/live?colour=red', ['colour']);
    });

    it('says make is required on /models', async () => {
      const body = await expectValidation('/models', ['make']);
      expect(body.details.make[0]).toMatch(/^make is required/);
    });

    it('answers 400 naming a text parameter that holds a NUL byte, on every route', async () => {
      for (const [path, name] of [
        ['/models?make=Porsche%00', 'make'],
        ['/auctions?make=Porsche%00', 'make'],
        ['/auctions?make=Porsche&model=911%00', 'model'],
        ['/auctions?vin=WP0%00', 'vin'],
        ['/auctions?seller_username=a%00b', 'seller_username'],
        ['/auctions?keyword=gull%00wing', 'keyword'],
        ['/auctions/live?make=%00', 'make'],
        ['/auctions/live?keyword=%00x', 'keyword'],
        ['/stats?make=Porsche%00', 'make'],
        ['/stats?make=Porsche&model=911%00', 'model'],
        [`/auctions/${ids.live911}/bids?sort=bid_at%00`, 'sort'],
      ] as const) {
        const body = await expectValidation(path, [name]);
        expect({ path, status: 400, error: body.error }).toEqual({ path, status: 400, error: 'Validation Error' });
      }
    });
  });

  describe('GET /makes and /models caching', () => {
    beforeAll(async () => {
      await db.query(`INSERT INTO makes (name) VALUES ('Porsche'), ('BMW') ON CONFLICT DO NOTHING`);
      await db.query(`INSERT INTO models (make_id, name) SELECT id, '911' FROM makes WHERE name = 'Porsche' ON CONFLICT DO NOTHING`);
    });

    it('sends ETag and Cache-Control, and 304 without a body for a matching If-None-Match', async () => {
      for (const path of ['/makes', '/models?make=Porsche']) {
        const first = await fetch(`${stack.url}${path}`);
        expect(first.status).toBe(200);
        const etag = first.headers.get('etag')!;
        expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
        expect(first.headers.get('cache-control')).toContain('max-age=');
        expect(first.headers.get('content-type')).toContain('application/json');
        const body = (await first.json()) as { data: string[] };
        expect(body.data.length).toBeGreaterThan(0);

        const again = await fetch(`${stack.url}${path}`, { headers: { 'if-none-match': etag } });
        expect(again.status).toBe(304);
        expect(again.headers.get('etag')).toBe(etag);
        expect(await again.text()).toBe('');
        const weakInList = await fetch(`${stack.url}${path}`, { headers: { 'if-none-match': `"other", W/${etag}` } });
        expect(weakInList.status).toBe(304);
        const stale = await fetch(`${stack.url}${path}`, { headers: { 'if-none-match': '"stale"' } });
        expect(stale.status).toBe(200);
      }
    });

    it('changes the ETag when the list changes', async () => {
      const before = (await fetch(`${stack.url}/makes`)).headers.get('etag');
      await db.query(`INSERT INTO makes (name) VALUES ('Lancia')`);
      const after = await fetch(`${stack.url}/makes`, { headers: { 'if-none-match': before! } });
      expect(after.status).toBe(200);
      expect(after.headers.get('etag')).not.toBe(before);
      expect(((await after.json()) as { data: string[] }).data).toContain('Lancia');
    });

    it('still validates /models before any caching', async () => {
      const res = await get('/models?make=Porsche&x=1');
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual({ x: ['x is not a recognised parameter'] });
    });
  });

  describe('exact totals while data changes', () => {
    it('updates cached totals when ingestion inserts, completes or edits auctions, and only then', async () => {
      const version = async () =>
        (await db.query(`SELECT sum(version)::text AS v FROM auction_data_version`))[0].v as string;
      const total = async (query: string) => (await get(`/auctions?${query}`)).body.meta.total as number;

      expect(await total('make=Porsche')).toBe(6);
      expect(await total('keyword=gullwing')).toBe(2);

      // A live auction's bids and views change: no new version, same totals.
      const before = await version();
      await db.query(`UPDATE auctions SET price = price + 1000, bid_count = bid_count + 1, views = 5000 WHERE id = $1`, [ids.live911]);
      await db.query(`UPDATE auctions SET views = views + 1, watches = 3 WHERE id = $1`, [ids.a911_67]);
      expect(await version()).toBe(before);

      // The live auction ends: it joins the completed set.
      await db.query(`UPDATE auctions SET is_live = false, auction_status = 'sold', source_status = 'sold' WHERE id = $1`, [ids.live911]);
      expect(await version()).not.toBe(before);
      expect(await total('make=Porsche')).toBe(7);
      expect((await get('/auctions/live?make=Porsche')).body.meta.total).toBe(1);

      // A new completed auction, then an edit of a filter column.
      const [added] = await insertAuctions(db, [{ title: 'Another gullwing', ocd_make_name: 'Mercedes-Benz', ocd_model_name: '300SL' }]);
      expect(await total('keyword=gullwing')).toBe(3);
      expect(await total('make=Porsche')).toBe(7);
      await db.query(`UPDATE auctions SET ocd_make_name = 'Porsche' WHERE id = $1`, [added]);
      expect(await total('make=Porsche')).toBe(8);
      await db.query(`DELETE FROM auctions WHERE id = $1`, [added]);
      expect(await total('make=Porsche')).toBe(7);
      // Put the ended auction back.
      await db.query(`UPDATE auctions SET is_live = true, auction_status = NULL, source_status = 'active' WHERE id = $1`, [ids.live911]);
      expect(await total('make=Porsche')).toBe(6);
    });
  });
});

describe('auction routes with authentication on', () => {
  let env: { restore(): Promise<void> };
  let stack: TestStack;
  let db: DataSource;

  beforeAll(async () => {
    env = await useIsolatedQueryEnvironment('auctions_auth');
    db = await openTestDataSource();
    stack = await startTestStack({ access: { enabled: true, burstCapacity: 100, burstRatePerSecond: 100 } });
  });

  afterAll(async () => {
    await stack?.close();
    await db?.destroy();
    await env?.restore();
  });

  it('requires an API key and meters the routes', async () => {
    for (const path of ['/auctions', '/auctions/live', '/auctions/1/bids']) {
      const res = await request(`${stack.url}${path}`);
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('Unauthorized');
    }
    const { createTestAccount } = await import('./support/accounts');
    const account = await createTestAccount(db, { plan: '1k' });
    const auth = { headers: { authorization: `Bearer ${account.apiKey}` } };
    const remaining = (res: JsonResponse) => Number(res.headers.get('x-ratelimit-remaining'));
    const ok = await request(`${stack.url}/auctions`, auth);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-ratelimit-limit')).toBe('1000');
    const first = remaining(ok);
    const missing = await request(`${stack.url}/auctions/5/bids`, auth);
    expect(missing.status).toBe(404);
    // (Exact allowance accounting is the metering specs' subject.)
    expect(remaining(missing)).toBeLessThan(first);
    const invalid = await request(`${stack.url}/auctions?limit=0`, auth);
    expect(invalid.status).toBe(400);
    const live = await request(`${stack.url}/auctions/live`, auth);
    expect(live.status).toBe(200);
    expect(remaining(live)).toBeLessThan(remaining(missing));
    expect((await request(`${stack.url}/makes`)).status).toBe(200);
  });
});
