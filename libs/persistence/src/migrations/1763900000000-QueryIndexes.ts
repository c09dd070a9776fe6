import { MigrationInterface, QueryRunner } from 'typeorm';

/** Completed auctions (`GET /auctions`) and live ones (`GET /auctions/live`) are disjoint partial sets. */
const DONE = 'WHERE NOT is_live';
const LIVE = 'WHERE is_live';

/**
 * Every sort has one index per direction, NULLS LAST both ways (a descending index read
 * backwards would put nulls first), ending with the `id` tiebreaker so offset and keyset
 * pages come straight off the index.
 */
function sortIndexes(prefix: string, where: string, sorts: Record<string, string>): [string, string][] {
  return Object.entries(sorts).flatMap(([name, column]): [string, string][] => [
    [`${prefix}_${name}_desc_idx`, `auctions (${column} DESC NULLS LAST, id DESC) ${where}`],
    [`${prefix}_${name}_asc_idx`, `auctions (${column} ASC NULLS LAST, id ASC) ${where}`],
  ]);
}

/** name → definition (after `CREATE INDEX … ON`). */
export const QUERY_INDEXES: readonly [string, string][] = [
  // GET /auctions sorts: date (default, desc), price, year, bids.
  ...sortIndexes('auctions_done', DONE, {
    date: 'auction_end_date',
    price: 'price',
    year: 'year',
    bids: 'bid_count',
  }),
  // Equality filters of /auctions in front of the default sort: the page and the exact count of a
  // filter come from one index range (an index-only scan for the count once vacuumed).
  ['auctions_done_make_date_idx', `auctions (ocd_make_name, auction_end_date DESC NULLS LAST, id DESC) ${DONE}`],
  [
    'auctions_done_make_model_date_idx',
    `auctions (ocd_make_name, ocd_model_name, auction_end_date DESC NULLS LAST, id DESC) INCLUDE (year) ${DONE}`,
  ],
  ['auctions_done_status_date_idx', `auctions (auction_status, auction_end_date DESC NULLS LAST, id DESC) ${DONE}`],
  ['auctions_done_source_date_idx', `auctions (source, auction_end_date DESC NULLS LAST, id DESC) ${DONE}`],
  // Exact lookups on both routes.
  ['auctions_vin_idx', `auctions (vin)`],
  ['auctions_seller_username_idx', `auctions (seller_username)`],
  // keyword: case-insensitive substring (ILIKE '%kw%') of title or description; small partial
  // copies for the live set, so a live keyword never scans the big posting lists. Descriptions
  // of completed auctions are found through the token index of migration DescriptionTokens
  // (their trigram index, built here before that migration existed, cost too much to write).
  ['auctions_title_trgm_idx', `auctions USING gin (title gin_trgm_ops)`],
  ['auctions_live_title_trgm_idx', `auctions USING gin (title gin_trgm_ops) ${LIVE}`],
  ['auctions_live_description_trgm_idx', `auctions USING gin (description gin_trgm_ops) ${LIVE}`],
  // GET /auctions/live sorts (a small set: ~1,500 rows), ending asc by default.
  ...sortIndexes('auctions_live', LIVE, {
    ending: 'auction_end_at',
    created: 'created_at',
    updated: 'updated_at',
    price: 'price',
    year: 'year',
    bids: 'bid_count',
  }),
];

/** Number of counter rows: writers on different connections rarely touch the same row. */
const VERSION_SLOTS = 16;

/** Filter columns of GET /auctions: a change to anything else cannot change a count. */
const FILTER_COLUMNS = [
  'is_live',
  'source',
  'auction_status',
  'ocd_make_name',
  'ocd_model_name',
  'vin',
  'seller_username',
  'year',
  'price',
  'title',
  'description',
];

/**
 * Indexes for the query API (docs/api/query.md, "Indexes") and the data version that keeps its
 * count cache exact:
 *
 * - sort and filter indexes, partial on `is_live`; pg_trgm GIN on title and description (and small
 *   partial ones for the live set);
 * - extended statistics on (ocd_make_name, ocd_model_name) and larger samples for both, so a
 *   make+model filter is not estimated as independent columns;
 * - `auction_data_version`: a counter bumped by statement triggers whenever a change to
 *   `auctions` can change the result set of GET /auctions (inserted or deleted rows, TRUNCATE,
 *   an update of a filter column of a completed row, a live row completing). The query service
 *   caches exact totals keyed by normalized filters and this version; ingestion needs to do
 *   nothing. Updates of live rows (bids, views) and of non-filter columns do not bump it. The
 *   counter is spread over `VERSION_SLOTS` rows (slot = backend pid) so concurrent writers do
 *   not serialize on one row lock; readers take `sum(version)`, which grows with every commit
 *   that bumped it and is visible exactly when the change is.
 *
 * Indexes are built CONCURRENTLY (outside a transaction) so applying this to a populated table
 * does not block ingestion; every statement is idempotent, so a failed run can simply rerun.
 */
export class QueryIndexes1763900000000 implements MigrationInterface {
  name = 'QueryIndexes1763900000000';
  transaction = false;

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    // This session only: GIN builds of title/description at 1M rows are several times faster.
    await q.query(`SET maintenance_work_mem = '256MB'`);

    for (const [name, definition] of QUERY_INDEXES) {
      // A CONCURRENTLY build that failed leaves an invalid index behind: rebuild it.
      const [state] = (await q.query(
        `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
          WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`,
        [name],
      )) as { valid: boolean }[];
      if (state && !state.valid) await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
      if (!state || !state.valid) await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${name} ON ${definition}`);
    }
    await q.query(`RESET maintenance_work_mem`);

    await q.query(`ALTER TABLE auctions ALTER COLUMN ocd_make_name SET STATISTICS 1000`);
    await q.query(`ALTER TABLE auctions ALTER COLUMN ocd_model_name SET STATISTICS 2000`);
    await q.query(`ALTER TABLE auctions ALTER COLUMN seller_username SET STATISTICS 1000`);
    // The planner estimates ILIKE '%kw%' by running the pattern over the histogram of these long
    // texts: ~5–10 ms of planning per query at the default target, and the estimate is useless
    // for substrings anyway. The query service picks keyword strategies from exact counts, so
    // a near-empty histogram (heuristic estimate, ~0.2 ms planning) is the better trade.
    await q.query(`ALTER TABLE auctions ALTER COLUMN title SET STATISTICS 1`);
    await q.query(`ALTER TABLE auctions ALTER COLUMN description SET STATISTICS 1`);
    await q.query(
      `CREATE STATISTICS IF NOT EXISTS auctions_make_model_stats (ndistinct, dependencies, mcv)
         ON ocd_make_name, ocd_model_name FROM auctions`,
    );

    await q.query(`
      CREATE TABLE IF NOT EXISTS auction_data_version (
        slot smallint PRIMARY KEY,
        version bigint NOT NULL DEFAULT 0
      )`);
    await q.query(
      `INSERT INTO auction_data_version (slot) SELECT generate_series(0, ${VERSION_SLOTS - 1}) ON CONFLICT DO NOTHING`,
    );
    await q.query(`
      CREATE OR REPLACE FUNCTION bump_auction_data_version() RETURNS void LANGUAGE sql AS $$
        UPDATE auction_data_version SET version = version + 1 WHERE slot = pg_backend_pid() % ${VERSION_SLOTS}
      $$`);
    const old = FILTER_COLUMNS.map((c) => `o.${c}`).join(', ');
    const now = FILTER_COLUMNS.map((c) => `n.${c}`).join(', ');
    await q.query(`
      CREATE OR REPLACE FUNCTION auctions_data_version_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM new_rows WHERE NOT is_live) THEN PERFORM bump_auction_data_version(); END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE OR REPLACE FUNCTION auctions_data_version_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (
          SELECT 1 FROM old_rows o JOIN new_rows n ON n.id = o.id
           WHERE (NOT o.is_live OR NOT n.is_live) AND (${old}) IS DISTINCT FROM (${now})
        ) THEN
          PERFORM bump_auction_data_version();
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE OR REPLACE FUNCTION auctions_data_version_on_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM bump_auction_data_version();
        RETURN NULL;
      END $$`);
    await q.query(`DROP TRIGGER IF EXISTS auctions_data_version_insert ON auctions`);
    await q.query(`DROP TRIGGER IF EXISTS auctions_data_version_update ON auctions`);
    await q.query(`DROP TRIGGER IF EXISTS auctions_data_version_delete ON auctions`);
    await q.query(`DROP TRIGGER IF EXISTS auctions_data_version_truncate ON auctions`);
    // INSERT … ON CONFLICT DO UPDATE: new_rows holds only the rows really inserted.
    await q.query(`
      CREATE TRIGGER auctions_data_version_insert AFTER INSERT ON auctions
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION auctions_data_version_on_insert()`);
    await q.query(`
      CREATE TRIGGER auctions_data_version_update AFTER UPDATE ON auctions
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION auctions_data_version_on_update()`);
    await q.query(`
      CREATE TRIGGER auctions_data_version_delete AFTER DELETE ON auctions
      FOR EACH STATEMENT EXECUTE FUNCTION auctions_data_version_on_change()`);
    await q.query(`
      CREATE TRIGGER auctions_data_version_truncate AFTER TRUNCATE ON auctions
      FOR EACH STATEMENT EXECUTE FUNCTION auctions_data_version_on_change()`);
  }

  public async down(q: QueryRunner): Promise<void> {
    for (const event of ['insert', 'update', 'delete', 'truncate']) {
      await q.query(`DROP TRIGGER IF EXISTS auctions_data_version_${event} ON auctions`);
    }
    await q.query(`DROP FUNCTION IF EXISTS auctions_data_version_on_insert()`);
    await q.query(`DROP FUNCTION IF EXISTS auctions_data_version_on_update()`);
    await q.query(`DROP FUNCTION IF EXISTS auctions_data_version_on_change()`);
    await q.query(`DROP FUNCTION IF EXISTS bump_auction_data_version()`);
    await q.query(`DROP TABLE IF EXISTS auction_data_version`);
    await q.query(`DROP STATISTICS IF EXISTS auctions_make_model_stats`);
    await q.query(`ALTER TABLE auctions ALTER COLUMN ocd_make_name SET STATISTICS -1`);
    await q.query(`ALTER TABLE auctions ALTER COLUMN ocd_model_name SET STATISTICS -1`);
    await q.query(`ALTER TABLE auctions ALTER COLUMN seller_username SET STATISTICS -1`);
    await q.query(`ALTER TABLE auctions ALTER COLUMN title SET STATISTICS -1`);
    await q.query(`ALTER TABLE auctions ALTER COLUMN description SET STATISTICS -1`);
    for (const [name] of [...QUERY_INDEXES].reverse()) {
      await q.query(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
    }
  }
}
