import 'reflect-metadata';
import { Observation } from '@cars/contracts';
import { createDataSource } from '@cars/persistence';
import { createIsolatedDatabase } from '@cars/testing';
import { bulkLoadObservations, NormalizationService, ObservationProcessor } from '@cars/service-change-detector';
import { DataSource } from 'typeorm';

/**
 * The two write paths store the same rows: one fixture of observations goes through the
 * processor's batches into one database and through the bulk loader into another, chunked
 * differently, and the auctions, bids, bid identities and parked observations are compared
 * (without ids and timestamps, which must differ).
 */
jest.setTimeout(60000);

interface Path {
  database: { url: string; drop: () => Promise<void> };
  db: DataSource;
}
let batchPath: Path;
let bulkPath: Path;

async function openPath(suffix: string): Promise<Path> {
  const database = await createIsolatedDatabase(suffix);
  const db = await createDataSource({ url: database.url, poolSize: 4 }).initialize();
  await new NormalizationService(db).loadReference();
  return { database, db };
}

beforeAll(async () => {
  batchPath = await openPath('cd_paths_batch');
  bulkPath = await openPath('cd_paths_bulk');
});

afterAll(async () => {
  for (const path of [batchPath, bulkPath]) {
    await path?.db.destroy();
    await path?.database.drop();
  }
});

type AuctionPart = NonNullable<Observation['auction']>;
const bid = (id: string, bidder: string | null, amount: number, at = '2024-06-01T19:00:00') => ({
  source_bid_id: id,
  bidder_name: bidder,
  amount,
  currency: 'GBP',
  bid_at: at,
});
type Bid = ReturnType<typeof bid>;

const cc = (id: string, observedAt: string, over: Partial<AuctionPart> | null, bids: Bid[] = []): Observation => ({
  source: 'collectingcars',
  source_auction_id: id,
  observed_at: observedAt,
  ...(over === null
    ? {}
    : {
        auction: {
          status: 'active',
          title: `1972 Chevy Corvette ${id}`,
          price: 50000,
          currency: 'GBP',
          year: 1972,
          make: 'Chevy',
          model: 'Corvette Stingray',
          auction_end_at: '2024-06-01T20:00:00',
          exterior_color: 'Guards Red',
          description: 'tab\there, newline\nthere, backslash \\ and "quotes"',
          known_flaws: ['a "quoted" flaw', 'back\\slash', 'comma, inside'],
          modifications: [],
          views: 10,
          ...over,
        },
      }),
  bids,
});

const bat = (id: string, observedAt: string, over: Partial<AuctionPart> = {}, bids: Bid[] = []): Observation => ({
  source: 'bringatrailer',
  source_auction_id: id,
  observed_at: observedAt,
  auction: {
    status: 'sold',
    title: `1967 Porsche 911S ${id}`,
    price: 145000,
    currency: 'USD',
    make: 'Porsche',
    model: '911S Coupe',
    auction_end_at: '2025-03-03T18:00:00',
    auction_end_date: '2025-03-03',
    bid_count: 2,
    ...over,
  },
  bids: bids.map((b) => ({ ...b, currency: 'USD' })),
});

/** Observations in arrival order: updates, stale states, late parents, orphans, rejects. */
const FIXTURE: Observation[] = [
  cc('1', '2024-06-01T18:00:00Z', {}, [bid('1-a', 'ann', 1000), bid('1-b', 'bob', 1100)]),
  // Bids that arrive before their auction: they wait for it on one path, load late on the other.
  cc('4', '2024-06-01T18:30:00Z', null, [bid('4-a', 'dee', 700)]),
  bat('9', '2025-03-03T19:00:00Z', {}, [bid('9-a', 'fan', 140000, '2025-03-03T17:00:00')]),
  cc('2', '2024-06-01T18:00:00Z', { status: 'active', price: 10 }),
  cc('1', '2024-06-01T19:30:00Z', { price: 52000, views: 99 }, [bid('1-b', 'bob', 1100), bid('1-c', 'ann', 1200)]),
  cc('2', '2024-06-02T21:00:00Z', { status: 'reserve not met', price: 20 }),
  // Older than what is stored by now: its auction state loses, its bids count.
  cc('1', '2024-06-01T18:10:00Z', { price: 1 }, [bid('1-d', 'cy', 1300), bid('1-e', null, 1400)]),
  cc('4', '2024-06-01T19:00:00Z', { make: 'Porsch', model: 'Nine Eleven' }),
  bat('9', '2025-03-03T20:00:00Z', { price: 150000 }, [bid('9-b', 'dino', 150000, '2025-03-03T17:30:00')]),
  cc('3', '2024-06-01T18:00:00Z', { auction_end_at: '2024-02-30T10:00:00' }),
  cc('orphan', '2024-06-02T00:00:00Z', null, [bid('o-1', 'x', 1)]),
  { source: 'nosuchsource', source_auction_id: 'x', observed_at: '2024-06-02T00:00:00Z', auction: { status: 'sold' }, bids: [] },
  cc('1', '2024-06-03T00:00:00Z', null, [bid('1-f', 'eve', 1500), bid('1-a', 'ann', 1000)]),
  cc('5', '2024-06-04T00:00:00Z', { status: 'sold', currency: null, price: 61000, description: null }),
];

async function storedRows(db: DataSource): Promise<Record<string, unknown>> {
  const query = async (sql: string) => (await db.query(sql)) as unknown[];
  return {
    auctions: await query(
      `SELECT to_jsonb(a) - 'id' - 'created_at' - 'updated_at' AS row
       FROM auctions a ORDER BY a.source, a.source_auction_id`,
    ),
    bids: await query(
      `SELECT to_jsonb(b) - 'id' - 'auction_id' - 'created_at' - 'updated_at' AS row, a.source_auction_id AS auction
       FROM bids b JOIN auctions a ON a.id = b.auction_id ORDER BY b.source, b.source_bid_id`,
    ),
    identities: await query(
      `SELECT i.source, i.source_bid_id, a.source_auction_id AS auction, b.source_bid_id AS bid
       FROM bid_identities i JOIN auctions a ON a.id = i.auction_id JOIN bids b ON b.id = i.bid_id
       ORDER BY i.source, i.source_bid_id`,
    ),
    pending: await query(
      `SELECT source, source_auction_id, reason, observation FROM pending_observations ORDER BY source, source_auction_id, id`,
    ),
  };
}

it('the processor batches and the bulk loader store the same auctions and bids', async () => {
  const processor = new ObservationProcessor(batchPath.db);
  const rejected: string[] = [];
  for (let i = 0; i < FIXTURE.length; i += 4) {
    const batch = FIXTURE.slice(i, i + 4);
    const result = await processor.processBatch(batch);
    rejected.push(...result.rejected.map((r) => batch[r.index].source_auction_id));
  }
  const bulk = await bulkLoadObservations(bulkPath.db, FIXTURE, { chunkSize: 3 });

  expect(rejected).toEqual(['3']);
  expect(bulk.rejected.map((r) => r.source_auction_id)).toEqual(['3']);

  const viaBatches = await storedRows(batchPath.db);
  const viaBulk = await storedRows(bulkPath.db);
  // The fixture reaches every case it is meant to: the comparison is not between empty tables.
  expect(viaBatches).toMatchObject({
    auctions: { length: 5 },
    bids: { length: 9 },
    identities: { length: 9 },
    pending: [
      { source: 'collectingcars', source_auction_id: 'orphan', reason: 'parent auction not stored' },
      { source: 'nosuchsource', source_auction_id: 'x', reason: 'unknown source' },
    ],
  });
  expect(viaBulk).toEqual(viaBatches);

  const [one] = (await batchPath.db.query(
    `SELECT price::int AS price, views, unique_bidder_count FROM auctions WHERE source_auction_id = '1'`,
  )) as { price: number; views: number; unique_bidder_count: number }[];
  expect(one).toEqual({ price: 52000, views: 99, unique_bidder_count: 4 });
});
