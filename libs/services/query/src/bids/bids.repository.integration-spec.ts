import { SortDirection } from '@cars/contracts';
import { createDataSource, pgPoolOf } from '@cars/persistence';
import { BidSeed, createIsolatedDatabase, insertAuctions, insertBids } from '@cars/testing';
import { DataSource } from 'typeorm';
import { PgSqlClient } from '../sql/sql-client';
import { BidsPageRequest } from './bid-query';
import { BidRow, BidsRepository } from './bids.repository';

/**
 * BidsRepository against a migrated database of its own: one auction's bids, bounded, sorted and
 * paged, with the exact total on every row; the total statement tells a missing auction from one
 * without bids.
 */

const BIDS: Record<string, Partial<BidSeed>> = {
  b1: { bidder_name: 'b1', amount: 50000, bid_at: '2025-12-28T10:00:00Z', created_at: '2025-12-28T10:00:05Z' },
  b2: { bidder_name: 'b2', amount: 60000, bid_at: '2025-12-29T10:00:00Z', created_at: '2025-12-29T10:00:05Z' },
  b3: { bidder_name: 'b3', amount: 80000, bid_at: '2025-12-31T10:00:00Z', created_at: '2025-12-30T10:00:05Z' },
  b4: { bidder_name: 'b1', amount: 70000, bid_at: '2025-12-30T10:00:00Z', created_at: '2025-12-31T10:00:05Z' },
  // Same time and amount as b4: ties are broken by id.
  b5: { bidder_name: 'b5', amount: 70000, bid_at: '2025-12-30T10:00:00Z', created_at: '2025-12-31T10:00:05Z' },
  unknownTime: { bidder_name: 'unknown-time', amount: null, bid_at: null, created_at: '2026-01-01T00:00:00Z' },
};

describe('BidsRepository (PostgreSQL)', () => {
  let drop: (() => Promise<void>) | undefined;
  let db: DataSource;
  let repository: BidsRepository;
  let auctionId: number;
  let quietAuctionId: number;
  const ids: Record<string, number> = {};
  const nameOf = new Map<string, string>();

  const names = (rows: BidRow[]) => rows.map((row) => nameOf.get(row.id) ?? `unknown id ${row.id}`);
  const request = (overrides: Partial<BidsPageRequest> = {}): BidsPageRequest => ({
    auctionId: String(auctionId),
    sort: 'bid_at',
    direction: 'asc',
    limit: 100,
    offset: 0,
    ...overrides,
  });

  beforeAll(async () => {
    const database = await createIsolatedDatabase('bids_repository');
    drop = database.drop;
    db = await createDataSource({ url: database.url, poolSize: 4, applicationName: 'test' }).initialize();
    repository = new BidsRepository(new PgSqlClient(pgPoolOf(db)));
    [auctionId, quietAuctionId] = await insertAuctions(db, [{ is_live: true }, {}]);
    const inserted = await insertBids(db, auctionId, Object.values(BIDS));
    Object.keys(BIDS).forEach((name, i) => {
      ids[name] = inserted[i];
      nameOf.set(String(inserted[i]), name);
    });
    // Another auction's bid, inside every bound used below: never part of the first auction's pages.
    const [other] = await insertAuctions(db, [{}]);
    await insertBids(db, other, [{ amount: 65000, bid_at: '2025-12-29T12:00:00Z' }]);
  });

  afterAll(async () => {
    await db?.destroy();
    await drop?.();
  });

  it('lists the auction bids oldest first, those without a time last, each with the exact total', async () => {
    const rows = await repository.page(request());
    expect(names(rows)).toEqual(['b1', 'b2', 'b4', 'b5', 'b3', 'unknownTime']);
    expect(rows.map((row) => row.total)).toEqual([6, 6, 6, 6, 6, 6]);
    expect(JSON.parse(rows[0].item)).toEqual({
      id: ids.b1,
      auction_id: auctionId,
      bidder_name: 'b1',
      amount: 50000,
      currency: 'USD',
      bid_at: '2025-12-28T10:00:00.000Z',
      created_at: '2025-12-28T10:00:05.000Z',
    });
    expect(JSON.parse(rows[5].item)).toMatchObject({ amount: null, bid_at: null });
  });

  it.each<[BidsPageRequest['sort'], SortDirection, string[]]>([
    ['bid_at', 'desc', ['b3', 'b5', 'b4', 'b2', 'b1', 'unknownTime']],
    ['amount', 'asc', ['b1', 'b2', 'b4', 'b5', 'b3', 'unknownTime']],
    ['amount', 'desc', ['b3', 'b5', 'b4', 'b2', 'b1', 'unknownTime']],
    ['created', 'asc', ['b1', 'b2', 'b3', 'b4', 'b5', 'unknownTime']],
    ['created', 'desc', ['unknownTime', 'b5', 'b4', 'b3', 'b2', 'b1']],
  ])('sorts by %s %s, nulls last, ties by id in the direction of the sort', async (sort, direction, expected) => {
    expect(names(await repository.page(request({ sort, direction })))).toEqual(expected);
  });

  it('bounds bid_at inclusively, and the total counts the bounded bids', async () => {
    const bounded = request({ bidAfter: '2025-12-29T10:00:00Z', bidBefore: '2025-12-30T10:00:00Z' });
    const rows = await repository.page(bounded);
    expect(names(rows)).toEqual(['b2', 'b4', 'b5']);
    expect(rows.map((row) => row.total)).toEqual([3, 3, 3]);
    expect(await repository.total(bounded)).toEqual({ found: true, total: 3 });
    // An offset in the instant: 11:00+01:00 is 10:00Z.
    expect(names(await repository.page(request({ bidAfter: '2025-12-31T11:00:00+01:00' })))).toEqual(['b3']);
    expect(names(await repository.page(request({ bidBefore: '2025-12-28T10:00:00Z' })))).toEqual(['b1']);
  });

  it('pages with limit and offset, the total still counting every bid', async () => {
    const page2 = await repository.page(request({ limit: 2, offset: 2 }));
    expect(names(page2)).toEqual(['b4', 'b5']);
    expect(page2.map((row) => row.total)).toEqual([6, 6]);
    expect(await repository.page(request({ limit: 2, offset: 6 }))).toEqual([]);
    // Past the end the page is empty; the total statement still answers.
    expect(await repository.total(request({ limit: 2, offset: 6 }))).toEqual({ found: true, total: 6 });
  });

  it('tells an auction without bids from one that does not exist', async () => {
    const quiet = request({ auctionId: String(quietAuctionId) });
    expect(await repository.page(quiet)).toEqual([]);
    expect(await repository.total(quiet)).toEqual({ found: true, total: 0 });
    expect(await repository.total(request({ auctionId: '999999999' }))).toEqual({ found: false, total: 0 });
    expect(await repository.total(request({ auctionId: '9223372036854775807' }))).toEqual({ found: false, total: 0 });
    expect(await repository.total(request({ bidAfter: '2027-01-01T00:00:00Z' }))).toEqual({ found: true, total: 0 });
  });
});
