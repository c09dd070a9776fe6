import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The webhook half (subscriptions and delivery records, docs/api/webhooks.md):
 * - `webhook_subscriptions`: an account's endpoints. `active_since` is the activation boundary,
 *   taken from the database clock (the clock that stamps `events.created_at`): an event matches
 *   only when it was observed at or after it. The signing secret is stored only encrypted
 *   (`secret_ciphertext` under the master key `secret_key_id`); the previous secret is kept for
 *   the rotation overlap until `previous_secret_expires_at`. `consecutive_failures`,
 *   `last_success_at` and `last_failure_at` are kept by the delivery worker after each attempt
 *   (the subscription's public `health`).
 * - `webhook_deliveries`: one row per (event, subscription), the truth the delivery worker works
 *   from. `payload` is the public envelope as JSON text, captured once, so every attempt sends the
 *   same bytes. A manual retry gives a new budget by raising `max_attempts` to `attempts` + 6.
 */
export class Webhooks1764500000000 implements MigrationInterface {
  name = 'Webhooks1764500000000';

  public async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_subscriptions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        url text NOT NULL,
        description text NOT NULL DEFAULT '',
        event_types text[] NOT NULL,
        filters jsonb NOT NULL DEFAULT '{}',
        enabled boolean NOT NULL DEFAULT true,
        active_since timestamptz NOT NULL DEFAULT now(),
        secret_ciphertext text NOT NULL,
        secret_key_id text NOT NULL,
        previous_secret_ciphertext text,
        previous_secret_key_id text,
        previous_secret_expires_at timestamptz,
        last_test_at timestamptz,
        consecutive_failures integer NOT NULL DEFAULT 0,
        last_success_at timestamptz,
        last_failure_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT webhook_subscriptions_event_types_check CHECK (cardinality(event_types) > 0)
      )`);
    await q.query(
      `CREATE INDEX webhook_subscriptions_account_idx ON webhook_subscriptions (account_id, created_at DESC, id DESC)`,
    );
    await q.query(`CREATE INDEX webhook_subscriptions_enabled_idx ON webhook_subscriptions (id) WHERE enabled`);

    await q.query(`
      CREATE TABLE webhook_deliveries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        subscription_id uuid NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
        account_id uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
        event_id text NOT NULL,
        event_type text NOT NULL,
        status text NOT NULL DEFAULT 'pending',
        waiting_reason text,
        attempts integer NOT NULL DEFAULT 0,
        max_attempts integer NOT NULL DEFAULT 6,
        next_attempt_at timestamptz,
        lease_expires_at timestamptz,
        last_attempt_at timestamptz,
        last_response_status integer,
        last_error text,
        last_response_excerpt text,
        last_duration_ms integer,
        payload text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT webhook_deliveries_event_subscription_key UNIQUE (event_id, subscription_id),
        CONSTRAINT webhook_deliveries_status_check
          CHECK (status IN ('pending', 'sending', 'succeeded', 'failed', 'canceled')),
        CONSTRAINT webhook_deliveries_waiting_reason_check
          CHECK (waiting_reason IS NULL OR (status = 'pending' AND waiting_reason IN ('allowance', 'make'))),
        CONSTRAINT webhook_deliveries_attempts_check CHECK (attempts >= 0 AND attempts <= max_attempts)
      )`);
    await q.query(
      `CREATE INDEX webhook_deliveries_subscription_idx ON webhook_deliveries (subscription_id, created_at DESC, id DESC)`,
    );
    // What the dispatcher claims: pending, not waiting, due.
    await q.query(`
      CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at, id)
      WHERE status = 'pending' AND waiting_reason IS NULL`);
    // Leases of attempts in flight, so an expired one (its worker died) is found.
    await q.query(
      `CREATE INDEX webhook_deliveries_lease_idx ON webhook_deliveries (lease_expires_at) WHERE status = 'sending'`,
    );
    await q.query(
      `CREATE INDEX webhook_deliveries_waiting_idx ON webhook_deliveries (waiting_reason, account_id, created_at)
       WHERE waiting_reason IS NOT NULL`,
    );
  }

  public async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS webhook_deliveries`);
    await q.query(`DROP TABLE IF EXISTS webhook_subscriptions`);
  }
}
