import { Inject, Injectable } from '@nestjs/common';
import { DELIVERY_MAX_ATTEMPTS, DeliveryErrorCode, DeliveryStatus, DeliveryWaitingReason, NotifyChannels } from '@cars/contracts';
import { PG_POOL, Sql } from '@cars/persistence';
import { Pool } from 'pg';

/** A `webhook_deliveries` row as the service reads it (the projection picks the public fields). */
export interface DeliveryRow {
  id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  waiting_reason: DeliveryWaitingReason | null;
  attempts: number;
  max_attempts: number;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_response_status: number | null;
  last_error: DeliveryErrorCode | null;
  last_response_excerpt: string | null;
  last_duration_ms: number | null;
  created_at: Date;
  updated_at: Date;
  /** The public envelope as JSON text, captured once. */
  payload: string;
}

const COLUMNS = `id, subscription_id, event_id, event_type, status, waiting_reason, attempts, max_attempts,
  next_attempt_at, last_attempt_at, last_response_status, last_error, last_response_excerpt,
  last_duration_ms, created_at, updated_at, payload`;

/** Deliveries shown by the deliveries route: the 20 most recent. */
export const DELIVERIES_LISTED = 20;

/** The SQL of `webhook_deliveries` for the management routes (the delivery worker has its own). */
@Injectable()
export class DeliveriesRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async recent(subscriptionId: string): Promise<DeliveryRow[]> {
    const { rows } = await this.pool.query<DeliveryRow>(
      `SELECT ${COLUMNS} FROM webhook_deliveries WHERE subscription_id = $1
        ORDER BY created_at DESC, id DESC LIMIT ${DELIVERIES_LISTED}`,
      [subscriptionId],
    );
    return rows;
  }

  async find(sql: Sql, subscriptionId: string, id: string, options: { lock?: boolean } = {}): Promise<DeliveryRow | null> {
    const { rows } = await sql.query<DeliveryRow>(
      `SELECT ${COLUMNS} FROM webhook_deliveries WHERE id = $1 AND subscription_id = $2${options.lock ? ' FOR UPDATE' : ''}`,
      [id, subscriptionId],
    );
    return rows[0] ?? null;
  }

  /** A delivery due now (the test event), payload captured as sent. */
  async insertDue(
    sql: Sql,
    delivery: { subscriptionId: string; accountId: string; eventId: string; eventType: string; payload: string },
  ): Promise<DeliveryRow> {
    const { rows } = await sql.query<DeliveryRow>(
      `INSERT INTO webhook_deliveries (subscription_id, account_id, event_id, event_type, payload, next_attempt_at)
       VALUES ($1, $2, $3, $4, $5, now()) RETURNING ${COLUMNS}`,
      [delivery.subscriptionId, delivery.accountId, delivery.eventId, delivery.eventType, delivery.payload],
    );
    return rows[0];
  }

  /** Whether an attempt of one of the endpoint's deliveries is in flight. */
  async anySending(sql: Sql, subscriptionId: string): Promise<boolean> {
    const { rows } = await sql.query(`SELECT 1 FROM webhook_deliveries WHERE subscription_id = $1 AND status = 'sending' LIMIT 1`, [
      subscriptionId,
    ]);
    return rows.length > 0;
  }

  /** Pausing: every pending delivery of the endpoint is canceled (an attempt in flight may finish). */
  async cancelPending(sql: Sql, subscriptionId: string): Promise<number> {
    const { rowCount } = await sql.query(
      `UPDATE webhook_deliveries SET status = 'canceled', waiting_reason = NULL, next_attempt_at = NULL, updated_at = now()
        WHERE subscription_id = $1 AND status = 'pending'`,
      [subscriptionId],
    );
    return rowCount ?? 0;
  }

  /**
   * The recover route: every `failed` delivery of the endpoint created in [since, until) gets a new
   * budget of six and is due now; the delivery worker is woken at commit. Returns how many.
   */
  async recoverFailed(sql: Sql, subscriptionId: string, since: Date, until: Date): Promise<number> {
    await sql.query(`SELECT pg_notify($1, 'recover')`, [NotifyChannels.DeliveryWakeup]);
    const { rowCount } = await sql.query(
      `UPDATE webhook_deliveries
          SET status = 'pending', waiting_reason = NULL, max_attempts = attempts + $4, next_attempt_at = now(), updated_at = now()
        WHERE subscription_id = $1 AND status = 'failed' AND created_at >= $2 AND created_at < $3`,
      [subscriptionId, since, until, DELIVERY_MAX_ATTEMPTS],
    );
    if (rowCount) await probeNow(sql, subscriptionId);
    return rowCount ?? 0;
  }

  /** The retry route: due now, with the budget given; the delivery worker is woken at commit. */
  async requeue(sql: Sql, id: string, maxAttempts: number): Promise<DeliveryRow> {
    await sql.query(`SELECT pg_notify($1, 'retry')`, [NotifyChannels.DeliveryWakeup]);
    const { rows } = await sql.query<DeliveryRow>(
      `UPDATE webhook_deliveries
          SET status = 'pending', waiting_reason = NULL, max_attempts = $2, next_attempt_at = now(), updated_at = now()
        WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, maxAttempts],
    );
    await probeNow(sql, rows[0].subscription_id);
    return rows[0];
  }
}

/**
 * A manual retry or recovery does not wait out an open circuit: the probe is due now (a success
 * closes the circuit and everything flows; a failure reopens it, backing off further).
 */
async function probeNow(sql: Sql, subscriptionId: string): Promise<void> {
  await sql.query(
    `UPDATE webhook_subscriptions SET circuit_open_until = now() WHERE id = $1 AND circuit_state = 'open' AND circuit_open_until > now()`,
    [subscriptionId],
  );
}
