import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two things every new delivery paid for and nothing used:
 * - `webhook_deliveries_due_idx` (next_attempt_at, id over due rows): no statement reads due
 *   deliveries in that order any more — the claim, the fan-out's backlog probe and the sweep go
 *   through `webhook_deliveries_fair_idx` (per endpoint), and counting due rows scans that one as
 *   well. An index entry less per inserted or rescheduled delivery.
 * - the foreign key from `webhook_deliveries.account_id` to `accounts`: a delivery's account is
 *   its subscription's (every insert copies it from the subscription row), the subscription's own
 *   key to `accounts` cascades, and the delivery's key to its subscription cascades in turn, so an
 *   account's deletion still removes its deliveries. The key cost a lookup and a row lock on
 *   `accounts` per inserted delivery.
 */
export class DeliveryWriteCost1765150000000 implements MigrationInterface {
  name = 'DeliveryWriteCost1765150000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhook_deliveries_due_idx`);
    await q.query(`ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_account_id_fkey`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_account_id_fkey
         FOREIGN KEY (account_id) REFERENCES accounts (id) ON DELETE CASCADE`,
    );
    await q.query(`
      CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at, id)
       WHERE status = 'pending' AND waiting_reason IS NULL`);
  }
}
