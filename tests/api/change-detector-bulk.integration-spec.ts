import 'reflect-metadata';
import { Observation } from '@cars/contracts';
import { createDataSource } from '@cars/persistence';
import { createIsolatedDatabase } from '@cars/testing';
import { NormalizationService, ObservationProcessor, bulkLoadObservations } from '@cars/service-change-detector';
import { DataSource } from 'typeorm';

/** The bulk loader: same rows as the pipeline, no events, identities registered, idempotent. */
let database: { url: string; drop: () => Promise<void> };
let dataSource: DataSource;

beforeAll(async () => {
  database = await createIsolatedDatabase('cd_bulk');
  dataSource = await createDataSource({ url: database.url, poolSize: 4 }).initialize();
  await new NormalizationService(dataSource).loadReference();
});

afterAll(async () => {
  await dataSource?.destroy();
  await database?.drop();
});

const auction = (id: string, observedAt: string, over: Record<string, unknown> = {}, bids: object[] = []): Observation => ({
  source: 'collectingcars',
  source_auction_id: id,
  observed_at: observedAt,
  auction: {
    status: 'sold',
    title: `Car ${id}`,
    price: 50000,
    currency: 'GBP',
    year: 1972,
    make: 'Chevy',
    model: 'Corvette Stingray',
    auction_end_at: '2024-06-01T20:00:00',
    exterior_color: 'Guards Red',
    description: 'tab\there, newline\nthere, backslash \\ and "quotes"',
    known_flaws: ['a "quoted" flaw', 'back\\slash', 'comma, inside'],
    ...over,
  },
  bids: bids as Observation['bids'],
});
const bid = (id: string, name: string) => ({ source_bid_id: id, bidder_name: name, amount: 1000, currency: 'GBP', bid_at: '2024-06-01T19:00:00' });

it('loads auctions and bids through the pipeline row building, without events', async () => {
  const observations: Observation[] = [
    auction('1', '2024-06-01T21:00:00Z', {}, [bid('1-a', 'ann'), bid('1-b', 'bob'), bid('1-c', 'ann')]),
    auction('2', '2024-06-02T21:00:00Z', { status: 'reserve not met', price: 10 }),
    auction('2', '2024-06-01T21:00:00Z', { status: 'active' }), // older: loses
    { source: 'collectingcars', source_auction_id: '1', observed_at: '2024-06-02T00:00:00Z', bids: [bid('1-d', 'cy')] },
    { source: 'collectingcars', source_auction_id: 'orphan', observed_at: '2024-06-02T00:00:00Z', bids: [bid('o-1', 'x')] },
    { source: 'nosuchsource', source_auction_id: 'x', observed_at: '2024-06-02T00:00:00Z', auction: { status: 'sold' }, bids: [] },
    auction('3', '2024-06-01T21:00:00Z', { auction_end_at: '2024-02-30T10:00:00' }),
  ];
  const result = await bulkLoadObservations(dataSource, observations, { chunkSize: 2 });
  expect(result).toMatchObject({ observations: 7, pending: 1, unknownSource: 1 });
  expect(result.rejected).toEqual([{ source: 'collectingcars', source_auction_id: '3', reason: expect.stringContaining('invalid date-time') as unknown }]);

  const rows = await dataSource.query(
    `SELECT source_auction_id AS id, source_status, auction_status, price::int AS price, price_usd::int AS usd, ocd_make_name, ocd_model_name,
            to_char(auction_end_local, 'YYYY-MM-DD"T"HH24:MI:SS') AS local, auction_end_at, description, known_flaws,
            standard_exterior_color, unique_bidder_count
     FROM auctions ORDER BY source_auction_id`,
  );
  expect(rows).toHaveLength(2);
  expect(rows[0]).toMatchObject({
    id: '1',
    source_status: 'sold',
    auction_status: 'sold',
    price: 50000,
    ocd_make_name: 'Chevrolet',
    ocd_model_name: 'Corvette',
    local: '2024-06-01T20:00:00',
    description: 'tab\there, newline\nthere, backslash \\ and "quotes"',
    known_flaws: ['a "quoted" flaw', 'back\\slash', 'comma, inside'],
    unique_bidder_count: 3,
  });
  expect(rows[0].usd).toBeGreaterThan(50000);
  expect((rows[0].auction_end_at as Date).toISOString()).toBe('2024-06-01T19:00:00.000Z');
  expect(rows[1]).toMatchObject({ id: '2', source_status: 'reserve not met', auction_status: 'reserve not met', price: 10 });

  const [counts] = await dataSource.query(
    `SELECT (SELECT count(*)::int FROM bids) AS bids, (SELECT count(*)::int FROM bid_identities) AS identities,
            (SELECT count(*)::int FROM events) AS events, (SELECT count(*)::int FROM pending_observations) AS pending`,
  );
  expect(counts).toEqual({ bids: 4, identities: 4, events: 0, pending: 2 });

  // Idempotent.
  const again = await bulkLoadObservations(dataSource, observations, { chunkSize: 3 });
  expect(again.auctions).toBe(0);
  expect(again.bids).toBe(0);

  // The pipeline afterwards: a loaded bid never fires bid.created; a new one does.
  const processor = new ObservationProcessor(dataSource);
  const outcome = await processor.process(auction('1', '2024-06-03T00:00:00Z', {}, [bid('1-a', 'ann'), bid('1-e', 'dee')]));
  expect(outcome).toMatchObject({ bidsCreated: 1, events: 1 });
  const types = await dataSource.query(`SELECT type FROM events ORDER BY seq`);
  expect(types).toEqual([{ type: 'bid.created' }]);
});

it('keeps the chunks merged before its input fails, and leaves no staging table behind', async () => {
  async function* failingAfter(count: number): AsyncGenerator<Observation> {
    for (let i = 0; i < count; i += 1) yield auction(`fail-${i}`, '2024-06-01T21:00:00Z', {}, [bid(`fail-${i}-a`, 'ann')]);
    throw new Error('input broke');
  }
  await expect(bulkLoadObservations(dataSource, failingAfter(5), { chunkSize: 2, concurrency: 2 })).rejects.toThrow('input broke');

  // Chunks are flushed when full: the two full ones were merged (and waited for), the last odd observation never was.
  const loaded = await dataSource.query(`SELECT source_auction_id AS id FROM auctions WHERE source_auction_id LIKE 'fail-%' ORDER BY 1`);
  expect(loaded).toEqual([{ id: 'fail-0' }, { id: 'fail-1' }, { id: 'fail-2' }, { id: 'fail-3' }]);
  const staging = await dataSource.query(`SELECT relname FROM pg_class WHERE relpersistence = 't' AND relname IN ('bulk_auctions', 'bulk_bids')`);
  expect(staging).toEqual([]);
});
