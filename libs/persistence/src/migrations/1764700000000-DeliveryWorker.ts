import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The delivery worker works from the database (docs/adr/0006-delivery-from-the-database.md: the
 * database is the truth; RabbitMQ and NOTIFY only wake workers):
 * - `events.fanned_out_at`: an event is fanned out to the matching subscriptions once, in the
 *   transaction that inserts its deliveries; the partial index finds what is left. Events stored
 *   before this migration are marked done (no subscription could have matched them).
 * - `webhook_deliveries.lease_token`: the claim of the attempt in flight (only its owner records the
 *   outcome); `reserved_period`: the billing period a unit of allowance is reserved in for that
 *   attempt, so a crash leaves evidence to release from.
 * - `delivery_wakeup` notifications at commit: new events, new deliveries, and retries (the
 *   webhooks service notifies explicitly) wake the worker without waiting for its sweep.
 */
export class DeliveryWorker1764700000000 implements MigrationInterface {
  name = 'DeliveryWorker1764700000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events ADD COLUMN fanned_out_at timestamptz`);
    await q.query(`UPDATE events SET fanned_out_at = now()`);
    await q.query(`CREATE INDEX events_unfanned_idx ON events (seq) WHERE fanned_out_at IS NULL`);
    await q.query(`ALTER TABLE webhook_deliveries ADD COLUMN lease_token uuid, ADD COLUMN reserved_period text`);
    // The subscriptions an event can match: enabled ones, by event type.
    await q.query(`CREATE INDEX webhook_subscriptions_event_types_idx ON webhook_subscriptions USING gin (event_types) WHERE enabled`);
    await q.query(`
      CREATE FUNCTION notify_delivery_wakeup() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('delivery_wakeup', TG_TABLE_NAME);
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER events_delivery_wakeup AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION notify_delivery_wakeup()`);
    await q.query(`
      CREATE TRIGGER webhook_deliveries_delivery_wakeup AFTER INSERT ON webhook_deliveries
      FOR EACH STATEMENT EXECUTE FUNCTION notify_delivery_wakeup()`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS webhook_deliveries_delivery_wakeup ON webhook_deliveries`);
    await q.query(`DROP TRIGGER IF EXISTS events_delivery_wakeup ON events`);
    await q.query(`DROP FUNCTION IF EXISTS notify_delivery_wakeup()`);
    await q.query(`DROP INDEX IF EXISTS webhook_subscriptions_event_types_idx`);
    await q.query(`ALTER TABLE webhook_deliveries DROP COLUMN IF EXISTS reserved_period, DROP COLUMN IF EXISTS lease_token`);
    await q.query(`DROP INDEX IF EXISTS events_unfanned_idx`);
    await q.query(`ALTER TABLE events DROP COLUMN IF EXISTS fanned_out_at`);
  }
}
