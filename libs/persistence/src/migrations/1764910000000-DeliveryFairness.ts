import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fair delivery:
 * - `webhook_deliveries_fair_idx`: the claim takes, per endpoint, its due first attempts before its
 *   due retries, oldest first, a few at a time — one short index range per endpoint, however long
 *   another endpoint's backlog.
 * - Each endpoint's circuit, kept by the delivery worker in the transaction that records attempts:
 *   `circuit_state` (`closed`, `open`: nothing is claimed until `circuit_open_until`, `half_open`:
 *   one probe attempt in flight, leased until `circuit_open_until`), `circuit_opened_at` (when it
 *   opened, for health) and `circuit_opens` (opens in a row since it last closed: the backoff
 *   doubles with each).
 */
export class DeliveryFairness1764910000000 implements MigrationInterface {
  name = 'DeliveryFairness1764910000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE INDEX webhook_deliveries_fair_idx ON webhook_deliveries (subscription_id, (attempts > 0), next_attempt_at)
      WHERE status = 'pending' AND waiting_reason IS NULL`);
    await q.query(`
      ALTER TABLE webhook_subscriptions
        ADD COLUMN circuit_state text NOT NULL DEFAULT 'closed',
        ADD COLUMN circuit_open_until timestamptz,
        ADD COLUMN circuit_opened_at timestamptz,
        ADD COLUMN circuit_opens integer NOT NULL DEFAULT 0,
        ADD CONSTRAINT webhook_subscriptions_circuit_check CHECK (
          circuit_state IN ('closed', 'open', 'half_open') AND (circuit_state = 'closed') = (circuit_open_until IS NULL))`);
    await q.query(`
      CREATE INDEX webhook_subscriptions_circuit_idx ON webhook_subscriptions (circuit_open_until)
      WHERE circuit_state <> 'closed'`);
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS webhook_subscriptions_circuit_idx`);
    await q.query(`
      ALTER TABLE webhook_subscriptions DROP CONSTRAINT IF EXISTS webhook_subscriptions_circuit_check,
        DROP COLUMN IF EXISTS circuit_opens, DROP COLUMN IF EXISTS circuit_opened_at,
        DROP COLUMN IF EXISTS circuit_open_until, DROP COLUMN IF EXISTS circuit_state`);
    await q.query(`DROP INDEX IF EXISTS webhook_deliveries_fair_idx`);
  }
}
