import { LiveAuctionsQueryDto, pageJsonOfRows, PageRows, RpcReply, SearchAuctionsQueryDto } from '@cars/contracts';
import { CostlyTurns, createDataSource, pgPoolOf } from '@cars/persistence';
import { AuctionSeed, createIsolatedDatabase, insertAuctions, insertBids } from '@cars/testing';
import { DataSource } from 'typeorm';
import { BidsRepository } from '../bids/bids.repository';
import { BidsService } from '../bids/bids.service';
import { PgSqlClient } from '../sql/sql-client';
import { PageValue } from './auction.projection';
import { AuctionsRepository } from './auctions.repository';
import { AuctionsService } from './auctions.service';

/**
 * A page sent to the gateway as PageRows is rebuilt there (pageJsonOfRows) into the very bytes of
 * its JSON text: every route that answers with a page, over rows that hold what JSON escapes
 * (quotes, backslashes, control characters, the field mark itself), text beyond the Basic
 * Multilingual Plane, nulls in every nullable column, empty and long lists and a description
 * larger than an AMQP frame.
 */

const NASTY = [
  'quotes "inside" and a \\ backslash, a trailing one \\',
  'lines\nand\ttabs\r\n, a form feed \f, a bell \u0007, a unit separator \u001f, DEL \u007f',
  'the mark "~": and escaped \\"~\\": and ,"~":1 and {"~":"x"}',
  'unicode: café, Ærø, 日本語, emoji 🚗🏁, combining é, RTL עברית, ZWJ 👨‍👩‍👧',
  '</script><script>alert(1)</script> & <b>',
  '',
];

const LONG_DESCRIPTION = Array.from({ length: 3000 }, (_, i) => `${NASTY[i % NASTY.length]} line ${i}.`).join(' ');

const NULLS: Partial<AuctionSeed> = {
  price: null,
  auction_status: null,
  auction_end_date: null,
  auction_end_at: null,
  mileage: null,
  mileage_unit: null,
  vin: null,
  title_status: null,
  city: null,
  state: null,
  zip: null,
  seller_username: null,
  year: null,
  has_reserve: null,
  engine: null,
  drivetrain: null,
  transmission: null,
  body_style: null,
  exterior_color: null,
  interior_color: null,
  description: null,
  ownership_history: null,
  featured_image_url: null,
  likes: null,
  unique_bidder_count: null,
} as Partial<AuctionSeed>;

const COMPLETED: Partial<AuctionSeed>[] = [
  { title: `1967 "Porsche" 911S ${NASTY[0]}`, description: NASTY.join('\n'), known_flaws: NASTY, modifications: ['a', '"b"', '\\c'] },
  { title: NASTY[3], description: LONG_DESCRIPTION, listing_details: Array.from({ length: 200 }, (_, i) => `detail ${i} ${NASTY[i % 6]}`) },
  { title: 'Nulls everywhere', ...NULLS },
  { title: NASTY[2], seller_username: 'naïve_ü', city: 'Zürich', ownership_history: NASTY[1], price: 0, year: 1900, mileage: 0 },
  ...Array.from({ length: 30 }, (_, i) => ({ title: `Plain ${i}`, price: 1000 + i, year: 1950 + i, vin: `VIN${i}` })),
];

const LIVE: Partial<AuctionSeed>[] = [
  { is_live: true, title: NASTY[3], description: NASTY.join(' '), auction_end_at: '2030-01-01T18:00:00Z', auction_end_date: '2030-01-01' },
  { is_live: true, title: 'Live with nulls', ...NULLS, updated_at: '2026-01-01T10:00:00.123456Z' },
  { is_live: true, title: 'Live plain', auction_end_at: '2030-01-02T18:00:00Z', auction_end_date: '2030-01-02' },
];

describe('pages as PageRows (PostgreSQL)', () => {
  let drop: (() => Promise<void>) | undefined;
  let db: DataSource;
  let auctions: AuctionsService;
  let bids: BidsService;
  let withBids: number;
  let withoutBids: number;

  beforeAll(async () => {
    const database = await createIsolatedDatabase('page_rows');
    drop = database.drop;
    db = await createDataSource({ url: database.url, poolSize: 4, applicationName: 'test' }).initialize();
    const sql = new PgSqlClient(pgPoolOf(db));
    auctions = new AuctionsService(new AuctionsRepository(sql, new CostlyTurns(1, 10_000)));
    bids = new BidsService(new BidsRepository(sql));
    const ids = await insertAuctions(db, [...COMPLETED, ...LIVE]);
    [withBids, withoutBids] = [ids[0], ids[1]];
    await insertBids(db, withBids, [
      ...NASTY.map((name, i) => ({ bidder_name: name, amount: 1000 + i, bid_at: `2025-06-01T18:${String(10 + i).padStart(2, '0')}:00Z` })),
      { bidder_name: null, amount: null, currency: null, bid_at: null },
    ] as never);
  });

  afterAll(async () => {
    await db?.destroy();
    await drop?.();
  });

  /** The JSON text of a reply, and its PageRows form as the gateway receives and rebuilds it. */
  const bothWays = (json: RpcReply<PageValue<unknown>>, rows: RpcReply<PageValue<unknown>>) => {
    if (!json.ok || !rows.ok) throw new Error(`not a page: ${JSON.stringify([json, rows])}`);
    expect(typeof json.value).toBe('string');
    expect(rows.value).toBeInstanceOf(PageRows);
    const text = (rows.value as PageRows).text;
    const received = Buffer.from(text);
    const rebuilt = Buffer.from(pageJsonOfRows(received.toString()));
    return { expected: Buffer.from(json.value as string), rebuilt, hop: received.length, text };
  };

  const searches: [string, SearchAuctionsQueryDto][] = [
    ['the default page', {}],
    ['a full page of 100', { limit: 100 }],
    ['by price, ascending', { sort: 'price', direction: 'asc', limit: 7 }],
    ['page 2', { page: 2, limit: 5 }],
    ['keyset paging', { pagination: 'cursor', limit: 3 }],
    ['a keyword', { keyword: 'café' }],
    ['one item', { vin: 'VIN3' }],
    ['no item', { vin: 'none such' }],
    ['past the end', { page: 99, limit: 50 }],
  ];

  it.each(searches)('/auctions, %s: the same bytes both ways', async (_, query) => {
    const { expected, rebuilt } = bothWays(await auctions.search(query, 'json'), await auctions.search(query, 'rows'));
    expect(rebuilt.equals(expected)).toBe(true);
    expect(rebuilt.toString()).toBe(expected.toString());
  });

  it('/auctions: the hop carries fewer bytes, and the unicode, escapes, nulls and long description arrive intact', async () => {
    const { expected, rebuilt, hop } = bothWays(await auctions.search({ limit: 100 }, 'json'), await auctions.search({ limit: 100 }, 'rows'));
    expect(rebuilt.equals(expected)).toBe(true);
    expect(expected.length).toBeGreaterThan(131_072);
    expect(hop).toBeLessThan(expected.length);
    const page = JSON.parse(rebuilt.toString()) as { data: Record<string, unknown>[] };
    expect(page.data.map((item) => item.title)).toEqual(expect.arrayContaining([NASTY[3], NASTY[2], 'Nulls everywhere']));
    expect(page.data.find((item) => item.title === NASTY[3])?.description).toBe(LONG_DESCRIPTION);
    const nulls = page.data.find((item) => item.title === 'Nulls everywhere')!;
    expect(Object.entries(NULLS).filter(([name]) => name in nulls && nulls[name] !== null)).toEqual([]);
  });

  it.each<[string, LiveAuctionsQueryDto]>([
    ['the default page', {}],
    ['keyset paging', { pagination: 'cursor', limit: 1 }],
    ['by update', { sort: 'updated', direction: 'desc' }],
    ['no item', { keyword: 'none such' }],
  ])('/auctions/live, %s: the same bytes both ways', async (_, query) => {
    const { expected, rebuilt } = bothWays(await auctions.live(query, 'json'), await auctions.live(query, 'rows'));
    expect(rebuilt.equals(expected)).toBe(true);
  });

  it('bids: the same bytes both ways, also for an empty page; a 404 stays a 404', async () => {
    for (const query of [{ auction_id: String(withBids) }, { auction_id: String(withBids), limit: 2, page: 2 }, { auction_id: String(withoutBids) }]) {
      const { expected, rebuilt } = bothWays(await bids.list(query, 'json'), await bids.list(query, 'rows'));
      expect(rebuilt.equals(expected)).toBe(true);
    }
    expect(await bids.list({ auction_id: '999999999' }, 'rows')).toEqual(await bids.list({ auction_id: '999999999' }, 'json'));
  });

  it('a PageRows value in a JSON envelope (Nest’s packet) is the page’s JSON text', async () => {
    const json = await auctions.search({ limit: 10 }, 'json');
    const rows = await auctions.search({ limit: 10 }, 'rows');
    expect(JSON.parse(JSON.stringify(rows))).toEqual(json);
  });
});
