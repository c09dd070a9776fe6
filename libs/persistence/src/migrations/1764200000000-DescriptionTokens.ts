import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The index expression of descriptions: their space-separated tokens, as written. The query
 * service writes this exact expression (the keyword condition in auction-query.ts) so the planner
 * matches it to the index.
 */
const DESCRIPTION_TOKENS_EXPRESSION = `string_to_array(description, ' ')`;

/**
 * A writer that adds the tokens of its descriptions itself (`add_description_tokens`) sets this
 * for its transaction (`set_config(…, 'on', true)`), and the triggers leave the work to it: the
 * change-detector does, knowing which tokens are long in the vocabulary.
 */
const RECORDED_SETTING = 'cars.description_tokens_recorded';

/**
 * Keyword search in descriptions through a token index instead of a trigram index.
 *
 * The trigram GIN index on `auctions.description` cost ~160 µs of PostgreSQL time per written
 * row (a 500-character description has ~300 distinct trigrams, each a pending-list entry): about
 * three quarters of the cost of writing an auction and the largest single item of ingestion. It is
 * replaced by two structures that answer the same `description ILIKE '%kw%'` exactly:
 *
 * - a GIN index on the description's space-separated tokens (`string_to_array(description, ' ')`,
 *   ~70 distinct entries per row, a third of the write cost);
 * - `description_tokens`, the vocabulary of every token ever written (trigram-indexed, tiny),
 *   kept by statement triggers on `auctions`, or by the writer itself (`RECORDED_SETTING`).
 *
 * A keyword `f1 f2 … fn` (split on spaces) occurs in a description only if the description holds
 * a token ending with f1, tokens equal to f2 … f(n-1) and a token starting with fn (n = 1: a token
 * containing f1), all compared case-insensitively. The query service looks those tokens up in the
 * vocabulary, lets the token index find the rows holding them, and rechecks `ILIKE` on each
 * candidate, so results are exactly those of `ILIKE`. The vocabulary only ever grows (a token of a
 * deleted or rolled-back row stays): a superset costs nothing but a few more lookups.
 *
 * The small partial trigram index of the live set (`auctions_live_description_trgm_idx`) stays:
 * live rows are few and GET /auctions/live keeps plain `ILIKE`.
 */
export class DescriptionTokens1764200000000 implements MigrationInterface {
  name = 'DescriptionTokens1764200000000';
  transaction = false;

  public async up(q: QueryRunner): Promise<void> {
    // No unique constraint on purpose: concurrent writers adding the same new token would wait for
    // each other's commit (ON CONFLICT) and serialize ingestion batches. Without it, a token two
    // transactions add at the same moment is stored twice, which lookups do not mind.
    await q.query(`CREATE TABLE IF NOT EXISTS description_tokens (token text NOT NULL)`);
    await q.query(`CREATE INDEX IF NOT EXISTS description_tokens_token_idx ON description_tokens (token)`);
    await q.query(`
      CREATE OR REPLACE FUNCTION add_description_tokens(tokens text[]) RETURNS void LANGUAGE sql AS $$
        INSERT INTO description_tokens (token)
        SELECT DISTINCT t FROM unnest(tokens) AS t
        WHERE t <> '' AND NOT EXISTS (SELECT 1 FROM description_tokens d WHERE d.token = t)
      $$`);
    await q.query(`
      CREATE OR REPLACE FUNCTION description_tokens_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF current_setting('${RECORDED_SETTING}', true) = 'on' THEN RETURN NULL; END IF;
        PERFORM add_description_tokens(ARRAY(
          SELECT DISTINCT t FROM new_rows, unnest(string_to_array(new_rows.description, ' ')) AS t));
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE OR REPLACE FUNCTION description_tokens_on_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF current_setting('${RECORDED_SETTING}', true) = 'on' THEN RETURN NULL; END IF;
        PERFORM add_description_tokens(ARRAY(
          SELECT DISTINCT t
          FROM new_rows n JOIN old_rows o ON o.id = n.id, unnest(string_to_array(n.description, ' ')) AS t
          WHERE n.description IS DISTINCT FROM o.description));
        RETURN NULL;
      END $$`);
    await q.query(`DROP TRIGGER IF EXISTS auctions_description_tokens_insert ON auctions`);
    await q.query(`DROP TRIGGER IF EXISTS auctions_description_tokens_update ON auctions`);
    await q.query(`
      CREATE TRIGGER auctions_description_tokens_insert AFTER INSERT ON auctions
      REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION description_tokens_on_insert()`);
    await q.query(`
      CREATE TRIGGER auctions_description_tokens_update AFTER UPDATE ON auctions
      REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION description_tokens_on_update()`);
    // Rows written before the triggers existed (the triggers are in place first, so none is missed).
    await q.query(
      `SELECT add_description_tokens(ARRAY(SELECT DISTINCT t FROM auctions, unnest(${DESCRIPTION_TOKENS_EXPRESSION}) AS t))`,
    );
    // Few new tokens arrive once the vocabulary is warm; a short pending list keeps lookups under
    // a millisecond (every lookup reads the whole pending list; a 4 MB one took 2.5 ms).
    await q.query(`
      CREATE INDEX IF NOT EXISTS description_tokens_trgm_idx ON description_tokens
      USING gin (token gin_trgm_ops) WITH (gin_pending_list_limit = 64)`);

    // Built CONCURRENTLY (no lock against ingestion); a failed build leaves an invalid index: rebuild.
    await q.query(`SET maintenance_work_mem = '256MB'`);
    const [state] = (await q.query(
      `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE c.relname = 'auctions_description_tokens_idx' AND c.relnamespace = current_schema()::regnamespace`,
    )) as { valid: boolean }[];
    if (state && !state.valid) await q.query(`DROP INDEX CONCURRENTLY IF EXISTS auctions_description_tokens_idx`);
    await q.query(
      `CREATE INDEX CONCURRENTLY IF NOT EXISTS auctions_description_tokens_idx ON auctions USING gin (${DESCRIPTION_TOKENS_EXPRESSION})`,
    );
    await q.query(`RESET maintenance_work_mem`);
    // The planner never sees a constant for `tokens && (lookup)`, so statistics of the expression
    // would go unused; skipping them saves ~7 s of every ANALYZE of auctions at 1M rows.
    await q.query(`ALTER INDEX auctions_description_tokens_idx ALTER COLUMN 1 SET STATISTICS 0`);
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS auctions_description_trgm_idx`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`SET maintenance_work_mem = '256MB'`);
    await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS auctions_description_trgm_idx ON auctions USING gin (description gin_trgm_ops)`);
    await q.query(`RESET maintenance_work_mem`);
    await q.query(`DROP INDEX CONCURRENTLY IF EXISTS auctions_description_tokens_idx`);
    await q.query(`DROP TRIGGER IF EXISTS auctions_description_tokens_insert ON auctions`);
    await q.query(`DROP TRIGGER IF EXISTS auctions_description_tokens_update ON auctions`);
    await q.query(`DROP FUNCTION IF EXISTS description_tokens_on_insert()`);
    await q.query(`DROP FUNCTION IF EXISTS description_tokens_on_update()`);
    await q.query(`DROP FUNCTION IF EXISTS add_description_tokens(text[])`);
    await q.query(`DROP TABLE IF EXISTS description_tokens`);
  }
}
