import { Inject, Injectable } from '@nestjs/common';
import { SubscribableEventType, WebhookCircuitState, WebhookFilters } from '@cars/contracts';
import { PG_POOL, Sql } from '@cars/persistence';
import { Pool } from 'pg';

/** A signing secret as stored: sealed under a master key of WEBHOOK_SECRET_KEY, named by its id. */
export interface SealedSecret {
  ciphertext: string;
  keyId: string;
}

/** A `webhook_subscriptions` row as the service reads it (never returned as is: see the projection). */
export interface SubscriptionRow {
  id: string;
  account_id: string;
  url: string;
  description: string;
  event_types: SubscribableEventType[];
  filters: WebhookFilters;
  enabled: boolean;
  active_since: Date;
  created_at: Date;
  updated_at: Date;
  consecutive_failures: number;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  pending_deliveries: number;
  oldest_pending_at: Date | null;
  circuit_state: WebhookCircuitState;
  circuit_open_until: Date | null;
  circuit_opened_at: Date | null;
}

/** The row and its health: open deliveries counted through `webhook_deliveries_open_idx`. */
const COLUMNS = `id, account_id, url, description, event_types, filters, enabled, active_since, created_at, updated_at,
  consecutive_failures, last_success_at, last_failure_at, circuit_state, circuit_open_until, circuit_opened_at,
  (SELECT count(*)::int FROM webhook_deliveries d
    WHERE d.subscription_id = webhook_subscriptions.id AND d.status IN ('pending', 'sending')) AS pending_deliveries,
  (SELECT min(d.created_at) FROM webhook_deliveries d
    WHERE d.subscription_id = webhook_subscriptions.id AND d.status IN ('pending', 'sending')) AS oldest_pending_at`;

export interface SubscriptionFields {
  url: string;
  description: string;
  event_types: readonly string[];
  filters: WebhookFilters;
}

/** The SQL of `webhook_subscriptions`. Every statement is scoped to the owning account. */
@Injectable()
export class SubscriptionsRepository {
  constructor(@Inject(PG_POOL) readonly pool: Pool) {}

  async page(accountId: string, limit: number, offset: number): Promise<{ rows: SubscriptionRow[]; total: number }> {
    const [{ rows }, { rows: count }] = await Promise.all([
      this.pool.query<SubscriptionRow>(
        `SELECT ${COLUMNS} FROM webhook_subscriptions WHERE account_id = $1
          ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
        [accountId, limit, offset],
      ),
      this.pool.query<{ total: number }>(`SELECT count(*)::int AS total FROM webhook_subscriptions WHERE account_id = $1`, [accountId]),
    ]);
    return { rows, total: count[0].total };
  }

  async find(sql: Sql, accountId: string, id: string, options: { lock?: boolean } = {}): Promise<SubscriptionRow | null> {
    const { rows } = await sql.query<SubscriptionRow>(
      `SELECT ${COLUMNS} FROM webhook_subscriptions WHERE id = $1 AND account_id = $2${options.lock ? ' FOR UPDATE' : ''}`,
      [id, accountId],
    );
    return rows[0] ?? null;
  }

  /** Every endpoint of the account, paused ones included (they count against the allowance). */
  async count(sql: Sql, accountId: string, options: { enabledOnly?: boolean; except?: string } = {}): Promise<number> {
    const { rows } = await sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_subscriptions
        WHERE account_id = $1 AND ($2::boolean IS NOT TRUE OR enabled) AND ($3::uuid IS NULL OR id <> $3)`,
      [accountId, options.enabledOnly ?? false, options.except ?? null],
    );
    return rows[0].n;
  }

  /** A new endpoint, active from now by the database clock (future observations only, no replay). */
  async insert(sql: Sql, accountId: string, fields: SubscriptionFields, secret: SealedSecret): Promise<SubscriptionRow> {
    const { rows } = await sql.query<SubscriptionRow>(
      `INSERT INTO webhook_subscriptions (account_id, url, description, event_types, filters, secret_ciphertext, secret_key_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
      [accountId, fields.url, fields.description, fields.event_types, JSON.stringify(fields.filters), secret.ciphertext, secret.keyId],
    );
    return rows[0];
  }

  /** Writes the fields; `newBoundary` moves the activation boundary to now (the database clock). */
  async update(
    sql: Sql,
    id: string,
    fields: SubscriptionFields & { enabled: boolean },
    newBoundary: boolean,
  ): Promise<SubscriptionRow> {
    const { rows } = await sql.query<SubscriptionRow>(
      `UPDATE webhook_subscriptions
          SET url = $2, description = $3, event_types = $4, filters = $5, enabled = $6,
              active_since = CASE WHEN $7 THEN now() ELSE active_since END, updated_at = now(),
              -- Resumed, or pointed elsewhere: the circuit starts closed (the failures stay in health).
              circuit_state = CASE WHEN ($6 AND NOT enabled) OR url <> $2 THEN 'closed' ELSE circuit_state END,
              circuit_open_until = CASE WHEN ($6 AND NOT enabled) OR url <> $2 THEN NULL ELSE circuit_open_until END,
              circuit_opened_at = CASE WHEN ($6 AND NOT enabled) OR url <> $2 THEN NULL ELSE circuit_opened_at END,
              circuit_opens = CASE WHEN ($6 AND NOT enabled) OR url <> $2 THEN 0 ELSE circuit_opens END
        WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, fields.url, fields.description, fields.event_types, JSON.stringify(fields.filters), fields.enabled, newBoundary],
    );
    return rows[0];
  }

  async delete(sql: Sql, id: string): Promise<void> {
    await sql.query(`DELETE FROM webhook_subscriptions WHERE id = $1`, [id]);
  }

  /**
   * Marks a test as sent now unless one was sent less than `cooldownSeconds` ago. Returns the
   * database time of the mark, or the seconds left of the cooldown.
   */
  async markTested(sql: Sql, id: string, cooldownSeconds: number): Promise<{ ok: true; at: Date } | { ok: false; waitSeconds: number }> {
    const { rows } = await sql.query<{ at: Date | null; wait: number }>(
      `WITH marked AS (
         UPDATE webhook_subscriptions SET last_test_at = now()
          WHERE id = $1 AND (last_test_at IS NULL OR last_test_at <= now() - make_interval(secs => $2))
          RETURNING last_test_at
       )
       SELECT (SELECT last_test_at FROM marked) AS at,
              ceil(extract(epoch FROM (last_test_at + make_interval(secs => $2) - now())))::int AS wait
         FROM webhook_subscriptions WHERE id = $1`,
      [id, cooldownSeconds],
    );
    const row = rows[0];
    return row.at ? { ok: true, at: row.at } : { ok: false, waitSeconds: Math.max(1, row.wait) };
  }

  /**
   * A new current secret; the current one is kept as the previous for `overlapHours` (dual
   * signatures), replacing whatever was kept before.
   */
  async rotateSecret(sql: Sql, id: string, secret: SealedSecret, overlapHours: number): Promise<void> {
    await sql.query(
      `UPDATE webhook_subscriptions
          SET previous_secret_ciphertext = secret_ciphertext, previous_secret_key_id = secret_key_id,
              previous_secret_expires_at = now() + make_interval(hours => $4),
              secret_ciphertext = $2, secret_key_id = $3, updated_at = now()
        WHERE id = $1`,
      [id, secret.ciphertext, secret.keyId, overlapHours],
    );
  }
}
