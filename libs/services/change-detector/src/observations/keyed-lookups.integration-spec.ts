import { Observation } from '@cars/contracts';
import { createDataSource, pgPoolOf } from '@cars/persistence';
import { createIsolatedDatabase, liveObservation } from '@cars/testing';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { migrateAndLoadReference } from '../normalization/normalization.service';
import { EventPublisher, OutboxEvent } from '../outbox/event-publisher';
import { OutboxRelay } from '../outbox/outbox.relay';
import { ObservationProcessor } from './observation.processor';

/** A new auction, or a later observation of it (another price). */
const observation = (i: number, price = 50_000): Observation => liveObservation(`keyed-${i}`, { price });

class Sink implements EventPublisher {
  count = 0;
  async publish(events: OutboxEvent[]): Promise<void> {
    this.count += events.length;
  }
}

/**
 * The write path's statements are prepared once per connection and keep their plan. Made while
 * the tables were empty, a plan that scanned `auctions` or `events` from end to end would go on
 * doing so at every batch as the tables grow — work growing with the table for one observation.
 * Two connections here, each making its plans on the empty tables; then the tables grow, and
 * batches of one observation and the relay's batches must not scan either table.
 */
describe('the write path finds rows by key, whatever the tables held when its plans were made', () => {
  let database: { url: string; drop: () => Promise<void> };
  let db: DataSource;
  let pool: Pool;

  beforeAll(async () => {
    database = await createIsolatedDatabase('keyed_lookups');
    db = await createDataSource({ url: database.url, poolSize: 2 }).initialize();
    await migrateAndLoadReference(db);
    pool = pgPoolOf(db);
  }, 60_000);

  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  /**
   * Sequential scans of the table so far, once every connection of the pool has flushed its
   * statistics (a backend flushes them as it goes idle, or up to a second later): all of them
   * held, each told to flush now.
   */
  async function seqScans(table: string): Promise<number> {
    const clients = [await pool.connect(), await pool.connect()];
    try {
      for (const client of clients) await client.query('SELECT pg_stat_force_next_flush()');
      const { rows } = await clients[0].query<{ n: number }>(`SELECT seq_scan::int AS n FROM pg_stat_user_tables WHERE relname = $1`, [table]);
      return rows[0].n;
    } finally {
      for (const client of clients) client.release();
    }
  }

  it('applies single observations and relays their events without a sequential scan of auctions or events', async () => {
    const processor = new ObservationProcessor(db);
    const sink = new Sink();
    const relay = new OutboxRelay(db, sink, { batchSize: 10 });
    // Plans made (custom, then the generic one kept) while the tables hold next to nothing.
    for (let i = 0; i < 16; i += 1) {
      await processor.processBatch([observation(i)]);
      await relay.relayOnce();
    }
    // The tables grow (one large batch, then its events relayed).
    await processor.processBatch(Array.from({ length: 3000 }, (_, i) => observation(1000 + i)));
    while ((await relay.relayOnce()) > 0);

    const before = { auctions: await seqScans('auctions'), events: await seqScans('events') };
    for (let i = 0; i < 10; i += 1) {
      await processor.processBatch([observation(10_000 + i)]); // a new auction
      await processor.processBatch([observation(1000 + i, 60_000 + i)]); // a stored one, updated
      await relay.relayOnce();
    }
    const after = { auctions: await seqScans('auctions'), events: await seqScans('events') };

    expect(after).toEqual(before);
    expect(sink.count).toBeGreaterThanOrEqual(3000 + 16 + 20);
  }, 60_000);
});
