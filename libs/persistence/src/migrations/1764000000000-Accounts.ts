import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Small facts an instance records about itself: the seed the demo API keys are derived from
 * (`ensureDemoAccounts` in @cars/accounts), whether the quick start's demo data set finished
 * loading. Never customer secrets.
 */
export class Accounts1764000000000 implements MigrationInterface {
  name = 'Accounts1764000000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE instance_state (
        name text PRIMARY KEY,
        value text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS instance_state`);
  }
}
