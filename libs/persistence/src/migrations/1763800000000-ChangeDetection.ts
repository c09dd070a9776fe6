import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Change detection (the ingestion pipeline):
 * - `pending_observations`: observations that cannot be applied yet (a bids-only observation
 *   whose parent auction is not stored, or an unknown source); replayed, with their events, in
 *   the transaction that stores the missing context.
 * - `reference_versions`: a counter bumped by statement triggers whenever the normalization
 *   tables (sources, makes, make_aliases, models, model_aliases) change, so every process can
 *   cache them and reload on change, inside its own transaction.
 * - the outbox relay is woken by `NOTIFY auction_events_outbox` on each insert into `events`.
 */
export class ChangeDetection1763800000000 implements MigrationInterface {
  name = 'ChangeDetection1763800000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE pending_observations (
        id bigserial PRIMARY KEY,
        source text NOT NULL,
        source_auction_id text NOT NULL,
        reason text NOT NULL,
        observation jsonb NOT NULL,
        received_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(
      `CREATE INDEX pending_observations_key_idx ON pending_observations (source, source_auction_id, id)`,
    );

    await q.query(`
      CREATE TABLE reference_versions (
        name text PRIMARY KEY,
        version bigint NOT NULL DEFAULT 1,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`INSERT INTO reference_versions (name) VALUES ('normalization')`);
    await q.query(`
      CREATE FUNCTION bump_normalization_version() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE reference_versions SET version = version + 1, updated_at = now() WHERE name = 'normalization';
        RETURN NULL;
      END $$`);
    for (const table of ['sources', 'makes', 'make_aliases', 'models', 'model_aliases']) {
      await q.query(`
        CREATE TRIGGER ${table}_normalization_version
        AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${table}
        FOR EACH STATEMENT EXECUTE FUNCTION bump_normalization_version()`);
    }

    await q.query(`
      CREATE FUNCTION notify_events_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('auction_events_outbox', '');
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER events_outbox_notify AFTER INSERT ON events
      FOR EACH STATEMENT EXECUTE FUNCTION notify_events_outbox()`);

    // normalize:rebuild and alias maintenance find auctions by listed make.
    await q.query(`CREATE INDEX auctions_listing_make_lower_idx ON auctions (lower(btrim(listing_make)))`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS auctions_listing_make_lower_idx`);
    await q.query(`DROP TRIGGER IF EXISTS events_outbox_notify ON events`);
    await q.query(`DROP FUNCTION IF EXISTS notify_events_outbox()`);
    for (const table of ['sources', 'makes', 'make_aliases', 'models', 'model_aliases']) {
      await q.query(`DROP TRIGGER IF EXISTS ${table}_normalization_version ON ${table}`);
    }
    await q.query(`DROP FUNCTION IF EXISTS bump_normalization_version()`);
    await q.query(`DROP TABLE IF EXISTS reference_versions`);
    await q.query(`DROP TABLE IF EXISTS pending_observations`);
  }
}
