import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Observation } from '@cars/contracts';
import { createDataSource } from '@cars/persistence';
import { ObservationProcessor, PendingReplayer } from '@cars/service-change-detector';
import { createIsolatedDatabase, insertAuctions } from '@cars/testing';
import { DataSource } from 'typeorm';

const run = promisify(execFile);
const ADMIN = join(__dirname, '../../dist/tools/admin/src/main.js');

/**
 * A parked observation (waiting for its context, never dropped) goes on by itself when its context
 * arrives, without another observation of its auction — after `reference:load` (a broadcast from
 * the database), and through the periodic backstop when its parent was stored by another path.
 */
describe('pending observations go on when their context arrives', () => {
  let database: { url: string; drop: () => Promise<void> };
  let db: DataSource;
  let processor: ObservationProcessor;
  const replayers: PendingReplayer[] = [];

  const observation = (id: string, withAuction: boolean, bids: object[] = []): Observation =>
    ({
      source: 'bringatrailer',
      source_auction_id: id,
      observed_at: new Date().toISOString(),
      ...(withAuction
        ? {
            auction: {
              url: `https://bringatrailer.com/listing/${id}`,
              title: `1972 Ferrari Dino ${id}`,
              status: 'sold',
              price: 400000,
              currency: 'USD',
              year: 1972,
              make: 'Ferrari',
              model: 'Dino 246 GT',
              auction_end_at: '2025-03-03T18:00:00',
              auction_end_date: '2025-03-03',
              bid_count: 1,
              sale_type: 'auction',
              price_type: 'sold',
            },
          }
        : {}),
      bids,
    }) as unknown as Observation;

  const count = async (sql: string, values: unknown[] = []) => Number((await db.query(sql, values))[0].n);
  const waitFor = async (what: string, check: () => Promise<boolean>, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  beforeAll(async () => {
    // Migrations only: no reference data, as a deploy that skipped loading it.
    database = await createIsolatedDatabase('pending_replay');
    db = await createDataSource({ url: database.url, poolSize: 4 }).initialize();
    processor = new ObservationProcessor(db);
  });

  afterAll(async () => {
    for (const replayer of replayers) await replayer.stop();
    await db?.destroy();
    await database?.drop();
  });

  it('replays observations ingested before the reference data as soon as it is loaded', async () => {
    // A long backstop: only the database's broadcast can bring these on within the wait below.
    const replayer = new PendingReplayer(processor, { listenUrl: database.url, intervalMs: 3_600_000 });
    replayers.push(replayer);
    await replayer.start();
    await replayer.idle();

    const parked = await processor.processBatch([observation('early-1', true), observation('early-2', true)]);
    expect(parked).toMatchObject({ accepted: 2, pending: 2, auctionsCreated: 0 });
    expect(await count(`SELECT count(*) AS n FROM pending_observations WHERE reason = 'unknown source'`)).toBe(2);

    const started = Date.now();
    await run(process.execPath, [ADMIN, 'reference:load'], { env: { ...process.env, DATABASE_URL: database.url } });
    await waitFor('the parked auctions', async () => (await count(`SELECT count(*) AS n FROM auctions`)) === 2);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await count(`SELECT count(*) AS n FROM pending_observations`)).toBe(0);
    expect(await count(`SELECT count(*) AS n FROM events WHERE type = 'auction.created'`)).toBe(2);
    expect(replayer.current).toMatchObject({ count: 0 });
  }, 30_000);

  it('replays a bid whose parent was stored by another path, through the backstop', async () => {
    const bid = { source_bid_id: 'late-bid', bidder_name: 'dino-fan', amount: 390000, currency: 'USD', bid_at: '2025-03-03T17:00:00' };
    const parked = await processor.processBatch([observation('parent-later', false, [bid])]);
    expect(parked).toMatchObject({ pending: 1 });

    const backstop = new PendingReplayer(processor, { intervalMs: 300 });
    replayers.push(backstop);
    await backstop.start();
    await backstop.idle();
    expect(backstop.current).toMatchObject({ count: 1, by_reason: { 'parent auction not stored': 1 } });
    expect(await count(`SELECT count(*) AS n FROM bids`)).toBe(0);

    // The parent arrives without an observation of its own (e.g. loaded in bulk).
    await insertAuctions(db, [{ source: 'bringatrailer', source_auction_id: 'parent-later' }]);
    await waitFor('the parked bid', async () => (await count(`SELECT count(*) AS n FROM bids`)) === 1);
    expect(await count(`SELECT count(*) AS n FROM pending_observations`)).toBe(0);
  }, 30_000);

  it('keeps an observation waiting while its context is still missing', async () => {
    const parked = await processor.processBatch([observation('never-parent', false, [])]);
    expect(parked.pending).toBe(1);
    const replayed = await processor.replayReady();
    expect(replayed).toMatchObject({ auctionsCreated: 0, bidsCreated: 0 });
    expect(await count(`SELECT count(*) AS n FROM pending_observations WHERE source_auction_id = 'never-parent'`)).toBe(1);
  });
});
