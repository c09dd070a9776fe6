import { EventHeaders } from '@cars/contracts';
import { generateMasterKey } from '@cars/signing';
import { openIsolatedDatabase } from '@cars/testing';
import { DispatchRepository, FanOutRepository } from '@cars/webhook-store';
import { Pool } from 'pg';
import { resolveDeliveryOptions } from '../config/delivery.options';
import { DeliveryStore } from '../dispatch/delivery-store';
import { fannedAlready } from '../event-intake.service';
import { FanOutService } from './fan-out.service';

/**
 * A `delivery.events` wake-up whose events this process has fanned out already (the database's
 * notification woke a pass first) needs no pass of its own: the fan-out remembers the seqs its
 * passes marked, and only those.
 */
describe('FanOutService: the events its passes fanned out (PostgreSQL)', () => {
  let close: (() => Promise<void>) | undefined;
  let pool: Pool;
  let fanOut: FanOutService;
  let n = 0;
  const options = resolveDeliveryOptions({ databaseUrl: 'unused', secretKeys: generateMasterKey() });

  /** Events stored; their seqs. */
  const events = async (count: number): Promise<string[]> => {
    const ids = Array.from({ length: count }, () => `evt_fanned_${(n += 1)}`);
    const { rows } = await pool.query<{ seq: string }>(
      `INSERT INTO events (id, type, api_version, created_at, payload, make, source)
       SELECT x.id, 'auction.created', '2026-10-17', now(), json_build_object('id', x.id), 'Porsche', 'bringatrailer'
         FROM unnest($1::text[]) AS x(id) RETURNING seq::text`,
      [ids],
    );
    return rows.map((row) => row.seq);
  };
  /** A batch message of `auction.events` as the relay publishes it, and a single-event one. */
  const batchMessage = (seqs: readonly string[]) => ({
    content: Buffer.from(JSON.stringify(seqs.map((seq) => ({ seq, routing: {}, event: { id: `evt_${seq}` } })))),
    properties: { headers: { [EventHeaders.Count]: seqs.length } },
  });
  const singleMessage = (seq: string) => ({
    content: Buffer.from(JSON.stringify({ id: `evt_${seq}` })),
    properties: { headers: { [EventHeaders.Seq]: seq } },
  });

  beforeAll(async () => {
    ({ pool, close } = await openIsolatedDatabase('delivery_fanned_memory', { poolSize: 2 }));
    fanOut = new FanOutService(new DeliveryStore(pool, options, new DispatchRepository(), new FanOutRepository()), options);
  });

  afterAll(async () => {
    await close?.();
  });

  it('covers exactly the events its passes marked; a wake-up for any other needs a pass', async () => {
    const first = await events(3);
    expect(fanOut.covers(first)).toBe(false);
    expect(fannedAlready(fanOut, [batchMessage(first)])).toBe(false);

    await fanOut.pass();
    const marked = await pool.query<{ seq: string }>(`SELECT seq::text FROM events WHERE fanned_out_at IS NOT NULL ORDER BY seq`);
    expect(marked.rows.map((row) => row.seq)).toEqual(first);
    expect(fanOut.covers(first)).toBe(true);
    expect(fannedAlready(fanOut, [batchMessage(first.slice(0, 2)), singleMessage(first[2])])).toBe(true);

    // Stored after the pass, or marked by another worker: not this process's to vouch for.
    const later = await events(1);
    expect(fannedAlready(fanOut, [batchMessage(first), singleMessage(later[0])])).toBe(false);
    const elsewhere = await events(1);
    await pool.query(`UPDATE events SET fanned_out_at = now() WHERE seq = $1`, [elsewhere[0]]);
    expect(fanOut.covers(elsewhere)).toBe(false);

    // A body that does not parse, or a message without seqs, is never taken as covered.
    expect(fannedAlready(fanOut, [{ content: Buffer.from('{'), properties: { headers: { [EventHeaders.Count]: 1 } } }])).toBe(false);
    expect(fanOut.covers([])).toBe(false);
  });

  it('lets a wake-up wait for the pass under way, which covers events committed before it began', async () => {
    const seqs = await events(2);
    fanOut.wake();
    expect(fanOut.covers(seqs)).toBe(false);
    await fanOut.passUnderWay();
    expect(fanOut.covers(seqs)).toBe(true);
    // Nothing under way: resolves at once.
    await fanOut.passUnderWay();
  });

  /** Index entries of `events_pkey` read, and rows of `events` read by sequential scans, so far (every connection's statistics flushed). */
  const eventsRead = async (): Promise<{ indexEntries: number; scannedRows: number }> => {
    const clients = [await pool.connect(), await pool.connect()];
    try {
      for (const client of clients) await client.query('SELECT pg_stat_force_next_flush()');
      const { rows } = await clients[0].query<{ index_entries: number; scanned_rows: number }>(
        `SELECT (SELECT idx_tup_read::int FROM pg_stat_user_indexes WHERE indexrelname = 'events_pkey') AS index_entries,
                (SELECT seq_tup_read::int FROM pg_stat_user_tables WHERE relname = 'events') AS scanned_rows`,
      );
      return { indexEntries: rows[0].index_entries, scannedRows: rows[0].scanned_rows };
    } finally {
      for (const client of clients) client.release();
    }
  };

  it("reads a batch's events by key, however many events the table keeps", async () => {
    // Analyzed, as autovacuum leaves a table: a join of the batch back to \`events\` by seq was
    // then planned as a walk over the whole table, at every batch (9,127 index entries for 5 events).
    await events(3000);
    await pool.query('ANALYZE events');
    await fanOut.pass();
    const before = await eventsRead();
    await events(5);
    await fanOut.pass();
    const after = await eventsRead();
    // A pass over five new events: a handful of index entries, not the table's 3,000 and more.
    expect(after.indexEntries - before.indexEntries).toBeLessThan(100);
    expect(after.scannedRows - before.scannedRows).toBe(0);
    const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE fanned_out_at IS NULL`);
    expect(rows[0].n).toBe(0);
  });
});
