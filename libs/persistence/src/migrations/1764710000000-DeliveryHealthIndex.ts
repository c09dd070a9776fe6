import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A subscription's `health` counts its open deliveries (`pending` or `sending`) and finds the oldest
 * on every list and retrieve: a partial index keeps that to the open ones, however long the history.
 */
export class DeliveryHealthIndex1764710000000 implements MigrationInterface {
  name = 'DeliveryHealthIndex1764710000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX webhook_deliveries_open_idx ON webhook_deliveries (subscription_id, created_at)
      WHERE status IN ('pending', 'sending')`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS webhook_deliveries_open_idx`);
  }
}
