import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Pricing statistics (GET /stats, docs/api/stats.md): rollup tables kept current by
 * statement-level triggers on `auctions`, and two covering partial indexes for the order
 * statistics (lowest, highest and the exact median), which cannot be rolled up. Price-bucket
 * counts tell the median query where in the index to start, so it reads a few hundred index
 * entries instead of half of the make.
 *
 * The triggers run inside the transaction of whatever statement writes `auctions` (INSERT, UPDATE,
 * DELETE, INSERT … ON CONFLICT, COPY, TRUNCATE), so a committed ingest is always reflected in the
 * rollups and ingestion code never has to know they exist.
 *
 * Which rows count (the same definitions are used by the stats repository and the docs):
 * - in scope: `ocd_make_name IS NOT NULL`;
 * - completed: `NOT is_live AND auction_status IN ('sold', 'reserve not met', 'bid to')`;
 * - sold: completed and `auction_status = 'sold'`;
 * - priced sale: sold and `price_usd IS NOT NULL` (the population of every price figure).
 */
export class StatsRollups1764100000000 implements MigrationInterface {
  name = 'StatsRollups1764100000000';

  public async up(q: QueryRunner): Promise<void> {
    // Per canonical make, model and model year: completed auctions, sales, and the priced sales
    // with their USD sum. NULL model / year are kept as their own cells (NULLS NOT DISTINCT).
    await q.query(`
      CREATE TABLE stats_sales_totals (
        make text NOT NULL,
        model text,
        year smallint,
        completed bigint NOT NULL,
        sold bigint NOT NULL,
        priced_sales bigint NOT NULL,
        priced_sum_usd bigint NOT NULL,
        CONSTRAINT stats_sales_totals_key UNIQUE NULLS NOT DISTINCT (make, model, year)
      )`);

    // Per make, calendar month of auction_end_date, model and year: priced sales and their sum.
    await q.query(`
      CREATE TABLE stats_sales_monthly (
        make text NOT NULL,
        month date NOT NULL,
        model text,
        year smallint,
        priced_sales bigint NOT NULL,
        priced_sum_usd bigint NOT NULL,
        CONSTRAINT stats_sales_monthly_key UNIQUE NULLS NOT DISTINCT (make, month, model, year)
      )`);

    // Price buckets: an integer partition of prices that preserves their order — 0 below $100,
    // else (number of digits) * 100 + (first two digits): [10,000, 11,000) is 510, [99,000,
    // 100,000) is 599, [100,000, 110,000) is 610. 1%–10% wide. stats_price_bucket_floor(b) is
    // the lowest price of bucket b, so "price >= floor" starts an index scan at the bucket.
    await q.query(`
      CREATE FUNCTION stats_price_bucket(price bigint) RETURNS integer
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
        SELECT CASE WHEN price < 100 THEN 0 ELSE length(price::text) * 100 + left(price::text, 2)::integer END
      $$`);
    await q.query(`
      CREATE FUNCTION stats_price_bucket_floor(bucket integer) RETURNS bigint
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
        SELECT CASE WHEN bucket = 0 THEN (-9223372036854775808)::bigint
                    ELSE (bucket % 100)::bigint * (10::numeric ^ (bucket / 100 - 2))::bigint END
      $$`);

    // Priced sales per make and price bucket, and per make, model and price bucket (no year:
    // with a year filter the median scans the index from the start of the make or model).
    await q.query(`
      CREATE TABLE stats_price_buckets_by_make (
        make text NOT NULL,
        bucket integer NOT NULL,
        sales bigint NOT NULL,
        CONSTRAINT stats_price_buckets_by_make_pkey PRIMARY KEY (make, bucket)
      )`);
    await q.query(`
      CREATE TABLE stats_price_buckets_by_model (
        make text NOT NULL,
        model text NOT NULL,
        bucket integer NOT NULL,
        sales bigint NOT NULL,
        CONSTRAINT stats_price_buckets_by_model_pkey PRIMARY KEY (make, model, bucket)
      )`);

    // Order statistics: an index-only scan in price order within a make (or make and model),
    // with the model year alongside for the year filters.
    await q.query(`
      CREATE INDEX auctions_stats_make_price_idx ON auctions (ocd_make_name, price_usd) INCLUDE (year)
      WHERE ${PRICED_SALE}`);
    await q.query(`
      CREATE INDEX auctions_stats_model_price_idx ON auctions (ocd_make_name, ocd_model_name, price_usd) INCLUDE (year)
      WHERE ${PRICED_SALE}`);

    await q.query(`
      CREATE FUNCTION stats_rollups_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${triggerBody('SELECT 1 AS sign, n.* FROM new_rows n')}
      END $$`);
    await q.query(`
      CREATE FUNCTION stats_rollups_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${triggerBody('SELECT -1 AS sign, o.* FROM old_rows o')}
      END $$`);
    await q.query(`
      CREATE FUNCTION stats_rollups_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        -- Most updates (bid counts, views, scrape times) change no column the stats read: every
        -- new row has an old row with the same id and the same stats columns.
        IF (SELECT count(*) FROM new_rows n JOIN old_rows o ON o.id = n.id
            WHERE (${STATS_COLUMNS.map((c) => `n.${c}`).join(', ')})
                  IS NOT DISTINCT FROM (${STATS_COLUMNS.map((c) => `o.${c}`).join(', ')}))
           = (SELECT count(*) FROM new_rows) THEN
          RETURN NULL;
        END IF;
        ${triggerBody('SELECT 1 AS sign, n.* FROM new_rows n UNION ALL SELECT -1 AS sign, o.* FROM old_rows o')}
      END $$`);
    await q.query(`
      CREATE FUNCTION stats_rollups_on_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        TRUNCATE stats_sales_totals, stats_sales_monthly, stats_price_buckets_by_make, stats_price_buckets_by_model;
        RETURN NULL;
      END $$`);

    await q.query(`
      CREATE TRIGGER auctions_stats_rollups_insert AFTER INSERT ON auctions
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION stats_rollups_on_insert()`);
    await q.query(`
      CREATE TRIGGER auctions_stats_rollups_update AFTER UPDATE ON auctions
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION stats_rollups_on_update()`);
    await q.query(`
      CREATE TRIGGER auctions_stats_rollups_delete AFTER DELETE ON auctions
      REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION stats_rollups_on_delete()`);
    await q.query(`
      CREATE TRIGGER auctions_stats_rollups_truncate AFTER TRUNCATE ON auctions
      FOR EACH STATEMENT EXECUTE FUNCTION stats_rollups_on_truncate()`);

    // Rows already there (a database migrated after data was loaded).
    await q.query(applyDeltas('SELECT 1 AS sign, a.* FROM auctions a'));
    await q.query(`ANALYZE stats_sales_totals, stats_sales_monthly, stats_price_buckets_by_make, stats_price_buckets_by_model`);
  }

  public async down(q: QueryRunner): Promise<void> {
    for (const op of ['insert', 'update', 'delete', 'truncate']) {
      await q.query(`DROP TRIGGER IF EXISTS auctions_stats_rollups_${op} ON auctions`);
      await q.query(`DROP FUNCTION IF EXISTS stats_rollups_on_${op}()`);
    }
    await q.query(`DROP INDEX IF EXISTS auctions_stats_model_price_idx`);
    await q.query(`DROP INDEX IF EXISTS auctions_stats_make_price_idx`);
    await q.query(`DROP TABLE IF EXISTS stats_price_buckets_by_model`);
    await q.query(`DROP TABLE IF EXISTS stats_price_buckets_by_make`);
    await q.query(`DROP TABLE IF EXISTS stats_sales_monthly`);
    await q.query(`DROP TABLE IF EXISTS stats_sales_totals`);
    await q.query(`DROP FUNCTION IF EXISTS stats_price_bucket_floor(integer)`);
    await q.query(`DROP FUNCTION IF EXISTS stats_price_bucket(bigint)`);
  }
}

/** The predicate of the order-statistics indexes; the stats queries repeat it verbatim. */
const PRICED_SALE = `auction_status = 'sold' AND NOT is_live AND price_usd IS NOT NULL`;

/** Every column of `auctions` the rollups read. */
const STATS_COLUMNS = ['ocd_make_name', 'ocd_model_name', 'year', 'auction_status', 'is_live', 'price_usd', 'auction_end_date'];

/** Rows that can contribute anything to the rollups: completed auctions of a canonical make. */
const CONTRIBUTES = `ocd_make_name IS NOT NULL AND NOT is_live AND auction_status IN ('sold', 'reserve not met', 'bid to')`;

/**
 * Trigger body: returns early when no old or new row is a completed auction (live auctions being
 * polled, rows of unknown makes…), else applies the deltas.
 */
function triggerBody(rows: string): string {
  return `
    IF NOT EXISTS (SELECT 1 FROM (${rows}) c WHERE ${CONTRIBUTES}) THEN
      RETURN NULL;
    END IF;
    ${applyDeltas(rows)}
    RETURN NULL;`;
}

/**
 * SQL adding the contributions of `rows` (auctions columns plus `sign`: +1 new, -1 old) to every
 * rollup. Contributions are summed per cell first, so an update that changes nothing the stats
 * read (views, bid counts, titles…) nets to zero and touches no rollup row; cells are written in
 * key order, so two ingest statements lock shared cells in the same order.
 */
function applyDeltas(rows: string): string {
  return `
    WITH c AS (${rows})
    INSERT INTO stats_sales_totals AS t (make, model, year, completed, sold, priced_sales, priced_sum_usd)
    SELECT ocd_make_name, ocd_model_name, year,
           sum(sign),
           coalesce(sum(sign) FILTER (WHERE auction_status = 'sold'), 0),
           coalesce(sum(sign) FILTER (WHERE auction_status = 'sold' AND price_usd IS NOT NULL), 0),
           coalesce(sum(sign * price_usd) FILTER (WHERE auction_status = 'sold'), 0)
    FROM c
    WHERE ${CONTRIBUTES}
    GROUP BY ocd_make_name, ocd_model_name, year
    HAVING sum(sign) <> 0
        OR coalesce(sum(sign) FILTER (WHERE auction_status = 'sold'), 0) <> 0
        OR coalesce(sum(sign) FILTER (WHERE auction_status = 'sold' AND price_usd IS NOT NULL), 0) <> 0
        OR coalesce(sum(sign * price_usd) FILTER (WHERE auction_status = 'sold'), 0) <> 0
    ORDER BY ocd_make_name, ocd_model_name, year
    ON CONFLICT (make, model, year) DO UPDATE SET
      completed = t.completed + EXCLUDED.completed,
      sold = t.sold + EXCLUDED.sold,
      priced_sales = t.priced_sales + EXCLUDED.priced_sales,
      priced_sum_usd = t.priced_sum_usd + EXCLUDED.priced_sum_usd;

    WITH c AS (${rows})
    INSERT INTO stats_sales_monthly AS t (make, month, model, year, priced_sales, priced_sum_usd)
    SELECT ocd_make_name, date_trunc('month', auction_end_date)::date, ocd_model_name, year,
           sum(sign), sum(sign * price_usd)
    FROM c
    WHERE ocd_make_name IS NOT NULL AND auction_end_date IS NOT NULL AND ${PRICED_SALE}
    GROUP BY ocd_make_name, date_trunc('month', auction_end_date)::date, ocd_model_name, year
    HAVING sum(sign) <> 0 OR sum(sign * price_usd) <> 0
    ORDER BY 1, 2, 3, 4
    ON CONFLICT (make, month, model, year) DO UPDATE SET
      priced_sales = t.priced_sales + EXCLUDED.priced_sales,
      priced_sum_usd = t.priced_sum_usd + EXCLUDED.priced_sum_usd;

    WITH c AS (${rows})
    INSERT INTO stats_price_buckets_by_make AS t (make, bucket, sales)
    SELECT ocd_make_name, stats_price_bucket(price_usd), sum(sign)
    FROM c
    WHERE ocd_make_name IS NOT NULL AND ${PRICED_SALE}
    GROUP BY 1, 2
    HAVING sum(sign) <> 0
    ORDER BY 1, 2
    ON CONFLICT (make, bucket) DO UPDATE SET sales = t.sales + EXCLUDED.sales;

    WITH c AS (${rows})
    INSERT INTO stats_price_buckets_by_model AS t (make, model, bucket, sales)
    SELECT ocd_make_name, ocd_model_name, stats_price_bucket(price_usd), sum(sign)
    FROM c
    WHERE ocd_make_name IS NOT NULL AND ocd_model_name IS NOT NULL AND ${PRICED_SALE}
    GROUP BY 1, 2, 3
    HAVING sum(sign) <> 0
    ORDER BY 1, 2, 3
    ON CONFLICT (make, model, bucket) DO UPDATE SET sales = t.sales + EXCLUDED.sales;`;
}
