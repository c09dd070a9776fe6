import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * New deliveries wake the dispatchers only when one is due for a claim: the fan-out now leases
 * most new deliveries to its own worker in the statement that inserts them (`sending`), and
 * deliveries waiting for a make or for allowance are released by their own paths. Before, every
 * fan-out batch sent `delivery_wakeup`, and every worker answered it with a claim that found
 * nothing.
 */
export class DeliveriesDueWakeup1765000000000 implements MigrationInterface {
  name = 'DeliveriesDueWakeup1765000000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION notify_deliveries_due() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM inserted WHERE status = 'pending' AND waiting_reason IS NULL) THEN
          PERFORM pg_notify('delivery_wakeup', TG_TABLE_NAME);
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`DROP TRIGGER webhook_deliveries_delivery_wakeup ON webhook_deliveries`);
    await q.query(`
      CREATE TRIGGER webhook_deliveries_delivery_wakeup AFTER INSERT ON webhook_deliveries
      REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION notify_deliveries_due()`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS webhook_deliveries_delivery_wakeup ON webhook_deliveries`);
    await q.query(`
      CREATE TRIGGER webhook_deliveries_delivery_wakeup AFTER INSERT ON webhook_deliveries
      FOR EACH STATEMENT EXECUTE FUNCTION notify_delivery_wakeup()`);
    await q.query(`DROP FUNCTION IF EXISTS notify_deliveries_due()`);
  }
}
