import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Reference data changes (sources, makes, models, aliases — by `reference:load`, `makes:alias`,
 * a new source, whatever the path) are broadcast as `NOTIFY reference_changes` at commit, from the
 * same statement triggers that bump the normalization version. The change-detector listens and
 * replays the pending observations whose missing context has arrived (they wait, never dropped).
 */
export class ReferenceChangeNotify1764600000000 implements MigrationInterface {
  name = 'ReferenceChangeNotify1764600000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION bump_normalization_version() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE reference_versions SET version = version + 1, updated_at = now() WHERE name = 'normalization';
        PERFORM pg_notify('reference_changes', '');
        RETURN NULL;
      END $$`);
    // The backstop's question: which parked observations could go on now?
    await q.query(`CREATE INDEX pending_observations_received_idx ON pending_observations (received_at)`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS pending_observations_received_idx`);
    await q.query(`
      CREATE OR REPLACE FUNCTION bump_normalization_version() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE reference_versions SET version = version + 1, updated_at = now() WHERE name = 'normalization';
        RETURN NULL;
      END $$`);
  }
}
