import { createDataSource } from '@cars/persistence';
import { createIsolatedDatabase } from '@cars/testing';
import { DataSource } from 'typeorm';

/**
 * The stats rollups (migration StatsRollups) against a recomputation from `auctions` after every
 * kind of write ingestion can make: multi-row inserts, updates that move rows between cells,
 * INSERT … ON CONFLICT DO UPDATE, deletes, rolled-back transactions, concurrent writers, TRUNCATE.
 */
describe('stats rollups stay equal to the auctions they summarize', () => {
  let isolated: { url: string; drop: () => Promise<void> };
  let db: DataSource;

  const COLUMNS = `source, source_auction_id, source_status, auction_status, is_live, price, currency, price_usd,
                   auction_end_date, year, ocd_make_name, ocd_model_name`;

  /** Rollups recomputed from scratch, in the rollup tables' shape, minus cells that sum to zero. */
  async function expectRollupsConsistent(): Promise<void> {
    const expectedTotals = await db.query(`
      SELECT ocd_make_name AS make, ocd_model_name AS model, year,
             count(*)::int AS completed,
             (count(*) FILTER (WHERE auction_status = 'sold'))::int AS sold,
             (count(*) FILTER (WHERE auction_status = 'sold' AND price_usd IS NOT NULL))::int AS priced_sales,
             coalesce(sum(price_usd) FILTER (WHERE auction_status = 'sold'), 0)::bigint::text AS priced_sum_usd
      FROM auctions
      WHERE ocd_make_name IS NOT NULL AND NOT is_live AND auction_status IN ('sold', 'reserve not met', 'bid to')
      GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`);
    const actualTotals = await db.query(`
      SELECT make, model, year, completed::int, sold::int, priced_sales::int, priced_sum_usd::text
      FROM stats_sales_totals
      WHERE completed <> 0 OR sold <> 0 OR priced_sales <> 0 OR priced_sum_usd <> 0
      ORDER BY 1, 2, 3`);
    expect(actualTotals).toEqual(expectedTotals);

    const expectedMonthly = await db.query(`
      SELECT ocd_make_name AS make, date_trunc('month', auction_end_date)::date::text AS month, ocd_model_name AS model,
             year, count(*)::int AS priced_sales, sum(price_usd)::bigint::text AS priced_sum_usd
      FROM auctions
      WHERE ocd_make_name IS NOT NULL AND auction_end_date IS NOT NULL
        AND auction_status = 'sold' AND NOT is_live AND price_usd IS NOT NULL
      GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`);
    const actualMonthly = await db.query(`
      SELECT make, month::text, model, year, priced_sales::int, priced_sum_usd::text
      FROM stats_sales_monthly
      WHERE priced_sales <> 0 OR priced_sum_usd <> 0
      ORDER BY 1, 2, 3, 4`);
    expect(actualMonthly).toEqual(expectedMonthly);

    const sales = `FROM auctions WHERE ocd_make_name IS NOT NULL AND auction_status = 'sold' AND NOT is_live AND price_usd IS NOT NULL`;
    expect(await db.query(`SELECT make, bucket, sales::int FROM stats_price_buckets_by_make WHERE sales <> 0 ORDER BY 1, 2`)).toEqual(
      await db.query(`SELECT ocd_make_name AS make, stats_price_bucket(price_usd) AS bucket, count(*)::int AS sales ${sales}
                      GROUP BY 1, 2 ORDER BY 1, 2`),
    );
    expect(
      await db.query(`SELECT make, model, bucket, sales::int FROM stats_price_buckets_by_model WHERE sales <> 0 ORDER BY 1, 2, 3`),
    ).toEqual(
      await db.query(`SELECT ocd_make_name AS make, ocd_model_name AS model, stats_price_bucket(price_usd) AS bucket, count(*)::int AS sales
                      ${sales} AND ocd_model_name IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`),
    );
  }

  it('buckets prices in price order, each bucket starting at its floor', async () => {
    const rows: { price: string; bucket: number; floor: string }[] = await db.query(`
      SELECT p::text AS price, stats_price_bucket(p) AS bucket, stats_price_bucket_floor(stats_price_bucket(p))::text AS floor
      FROM unnest(ARRAY[-5, 0, 1, 99, 100, 101, 109, 110, 999, 1000, 1099, 1100, 9999, 10000, 99999, 100000, 123456,
                        9223372036854775807]::bigint[]) p`);
    expect(rows.map((r) => [r.price, r.bucket, r.floor])).toEqual([
      ['-5', 0, '-9223372036854775808'],
      ['0', 0, '-9223372036854775808'],
      ['1', 0, '-9223372036854775808'],
      ['99', 0, '-9223372036854775808'],
      ['100', 310, '100'],
      ['101', 310, '100'],
      ['109', 310, '100'],
      ['110', 311, '110'],
      ['999', 399, '990'],
      ['1000', 410, '1000'],
      ['1099', 410, '1000'],
      ['1100', 411, '1100'],
      ['9999', 499, '9900'],
      ['10000', 510, '10000'],
      ['99999', 599, '99000'],
      ['100000', 610, '100000'],
      ['123456', 612, '120000'],
      ['9223372036854775807', 1992, '9200000000000000000'],
    ]);
  });

  beforeAll(async () => {
    isolated = await createIsolatedDatabase('stats_rollups');
    db = await createDataSource({ url: isolated.url, poolSize: 8, applicationName: 'stats-rollups-spec' }).initialize();
    await db.query(`INSERT INTO sources (id, name, live, timezone) VALUES ('bringatrailer', 'Bring a Trailer', true, 'America/Los_Angeles'),
                    ('collectingcars', 'Collecting Cars', false, 'Europe/London')`);
  }, 120000);

  afterAll(async () => {
    await db?.destroy();
    await isolated?.drop();
  }, 60000);

  it('follows multi-row inserts of every status, live rows, NULL models, years, dates and prices', async () => {
    await db.query(`
      INSERT INTO auctions (${COLUMNS})
      SELECT CASE WHEN i % 5 = 0 THEN 'collectingcars' ELSE 'bringatrailer' END, 'a' || i,
             CASE WHEN i % 17 = 0 THEN 'active' ELSE 'ended' END,
             CASE WHEN i % 17 = 0 THEN NULL
                  ELSE (ARRAY['sold', 'sold', 'sold', 'reserve not met', 'bid to', 'canceled', 'withdrawn', 'unknown'])[1 + i % 8] END,
             i % 17 = 0,
             CASE WHEN i % 23 = 0 THEN NULL ELSE 10000 + (i * 7919) % 90000 END,
             CASE WHEN i % 5 = 0 THEN 'GBP' ELSE 'USD' END,
             CASE WHEN i % 23 = 0 THEN NULL ELSE 10000 + (i * 7919) % 90000 END,
             CASE WHEN i % 19 = 0 THEN NULL ELSE DATE '2025-01-15' + (i % 400) END,
             CASE WHEN i % 13 = 0 THEN NULL ELSE 1960 + i % 30 END,
             CASE WHEN i % 29 = 0 THEN NULL ELSE (ARRAY['Porsche', 'Ferrari', 'Alfa Romeo'])[1 + i % 3] END,
             CASE WHEN i % 11 = 0 THEN NULL ELSE 'M' || (i % 4) END
      FROM generate_series(1, 2000) i`);
    await expectRollupsConsistent();
  }, 60000);

  it('follows updates that move rows between cells, statuses, prices and months', async () => {
    await db.query(`UPDATE auctions SET auction_status = 'withdrawn' WHERE id % 7 = 0 AND auction_status = 'sold'`);
    await db.query(`UPDATE auctions SET price_usd = price_usd + 1234, price = price + 1000 WHERE id % 6 = 1`);
    await db.query(`UPDATE auctions SET ocd_model_name = 'M9', year = year + 1 WHERE id % 10 = 3`);
    await db.query(`UPDATE auctions SET ocd_make_name = 'Ferrari' WHERE id % 9 = 4`);
    await db.query(`UPDATE auctions SET auction_end_date = auction_end_date - 45 WHERE id % 8 = 2`);
    await db.query(`UPDATE auctions SET is_live = false, source_status = 'sold', auction_status = 'sold' WHERE is_live AND id % 2 = 0`);
    await db.query(`UPDATE auctions SET is_live = true, source_status = 'active', auction_status = NULL WHERE id % 31 = 0`);
    await db.query(`UPDATE auctions SET price_usd = NULL WHERE id % 37 = 0`);
    // Mixed in one statement: rows whose stats columns change and rows whose only change is the id.
    await db.query(`UPDATE auctions SET id = id + 100000, price_usd = CASE WHEN id % 100 = 0 THEN price_usd + 1 ELSE price_usd END
                    WHERE id % 50 = 0`);
    await expectRollupsConsistent();
  }, 60000);

  it('follows INSERT … ON CONFLICT DO UPDATE (upserts) and deletes', async () => {
    await db.query(`
      INSERT INTO auctions (${COLUMNS})
      SELECT 'bringatrailer', 'a' || i, 'ended', 'sold', false, 55555, 'USD', 55555, DATE '2025-06-30', 1970, 'Porsche', 'M1'
      FROM generate_series(1900, 2100) i
      ON CONFLICT (source, source_auction_id) DO UPDATE SET
        auction_status = EXCLUDED.auction_status, is_live = EXCLUDED.is_live, price_usd = EXCLUDED.price_usd,
        auction_end_date = EXCLUDED.auction_end_date, ocd_model_name = EXCLUDED.ocd_model_name`);
    await db.query(`DELETE FROM auctions WHERE id % 4 = 0`);
    await expectRollupsConsistent();
  }, 60000);

  it('writes no rollup row for updates the stats do not read', async () => {
    const versions = `SELECT xmin::text AS x FROM stats_sales_totals UNION ALL SELECT xmin::text FROM stats_sales_monthly
                      UNION ALL SELECT xmin::text FROM stats_price_buckets_by_make UNION ALL SELECT xmin::text FROM stats_price_buckets_by_model
                      ORDER BY 1`;
    const before = await db.query(versions);
    await db.query(`UPDATE auctions SET views = coalesce(views, 0) + 1, title = 'seen', updated_at = now()`);
    const after = await db.query(versions);
    expect(after).toEqual(before);
  }, 60000);

  it('keeps nothing of a rolled-back transaction', async () => {
    await expect(
      db.transaction(async (tx) => {
        await tx.query(`UPDATE auctions SET price_usd = price_usd * 2 WHERE auction_status = 'sold'`);
        await tx.query(`DELETE FROM auctions WHERE ocd_make_name = 'Ferrari'`);
        throw new Error('rollback');
      }),
    ).rejects.toThrow('rollback');
    await expectRollupsConsistent();
  }, 60000);

  it('stays exact under concurrent single-row writers on the same cells', async () => {
    const ids: { id: string }[] = await db.query(`SELECT id::text FROM auctions ORDER BY id LIMIT 300`);
    await Promise.all(
      ids.map(({ id }, i) =>
        i % 3 === 0
          ? db.query(`UPDATE auctions SET auction_status = 'sold', is_live = false, price_usd = 1000 + $2::int WHERE id = $1`, [id, i])
          : i % 3 === 1
            ? db.query(`UPDATE auctions SET ocd_model_name = CASE WHEN ocd_model_name = 'M1' THEN 'M2' ELSE 'M1' END WHERE id = $1`, [id])
            : db.query(
                `INSERT INTO auctions (${COLUMNS}) VALUES ('bringatrailer', $1, 'ended', 'sold', false, 20000, 'USD', 20000, '2025-07-01', 1971, 'Porsche', 'M1')`,
                [`concurrent-${i}`],
              ),
      ),
    );
    await expectRollupsConsistent();
  }, 60000);

  it('empties the rollups when auctions is truncated', async () => {
    await db.query(`TRUNCATE auctions RESTART IDENTITY CASCADE`);
    for (const table of ['stats_sales_totals', 'stats_sales_monthly', 'stats_price_buckets_by_make', 'stats_price_buckets_by_model']) {
      expect(await db.query(`SELECT count(*)::int AS n FROM ${table}`)).toEqual([{ n: 0 }]);
    }
    await expectRollupsConsistent();
  }, 60000);
});
