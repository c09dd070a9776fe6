import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What became of each observation of an ingest run that asked to know (`ingest --wait`): applied,
 * pending (waiting for its context) or rejected (dead-lettered). Keyed by run and message, so a
 * redelivered message overwrites its own row instead of counting twice. Rows are kept 7 days.
 */
export class IngestOutcomes1764660000000 implements MigrationInterface {
  name = 'IngestOutcomes1764660000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ingest_outcomes (
        run_id text NOT NULL,
        message_id text NOT NULL,
        outcome text NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (run_id, message_id),
        CONSTRAINT ingest_outcomes_outcome_check CHECK (outcome IN ('applied', 'pending', 'rejected'))
      )`);
    await q.query(`CREATE INDEX ingest_outcomes_recorded_idx ON ingest_outcomes (recorded_at)`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS ingest_outcomes`);
  }
}
