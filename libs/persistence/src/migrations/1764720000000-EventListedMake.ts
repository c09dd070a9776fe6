import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A subscription with a `make` filter waits (delivery `waiting_reason:
 * "make"`) while an event's make is unknown, until make maintenance decides. The routing context
 * keeps the canonical make (`events.make`, null while unknown); `listed_make` keeps the spelling
 * the source listed (the parent auction's for a bid), so the worker can resolve it once an alias
 * or an exclusion exists.
 */
export class EventListedMake1764720000000 implements MigrationInterface {
  name = 'EventListedMake1764720000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events ADD COLUMN listed_make text`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events DROP COLUMN IF EXISTS listed_make`);
  }
}
