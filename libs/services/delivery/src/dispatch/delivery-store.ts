import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { commitUsage, getUsage, pgRunner, planInForce, releaseUsage, Reservation, reserveUsage } from '@cars/accounts';
import { EventTypes } from '@cars/contracts';
import { PG_POOL, withTransaction } from '@cars/persistence';
import { Pool, PoolClient } from 'pg';
import { DELIVERY_OPTIONS, ResolvedDeliveryOptions } from '../config/delivery.options';
import { AttemptOutcome } from './attempt-outcome';
import { delaysInSeconds, nextAttemptSql } from './schedule';

/** A delivery claimed for one attempt: what is sent, and the lease that lets only this worker record it. */
export interface ClaimedDelivery {
  id: string;
  subscriptionId: string;
  accountId: string;
  eventId: string;
  eventType: string;
  /** The captured envelope: the body of every attempt, byte for byte. */
  payload: string;
  url: string;
  secret: { ciphertext: string; keyId: string };
  /** The previous secret while a rotation's 24 h overlap lasts. */
  previousSecret: { ciphertext: string; keyId: string } | null;
  leaseToken: string;
  /** The unit of allowance held for this attempt (real events only). */
  reservation: Reservation | null;
}

interface ClaimRow {
  id: string;
  subscription_id: string;
  account_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  url: string;
  secret_ciphertext: string;
  secret_key_id: string;
  previous_ciphertext: string | null;
  previous_key_id: string | null;
}

/**
 * The delivery rows are the truth (DESIGN §6): claims, leases, outcomes and the allowance held by
 * attempts in flight all live in `webhook_deliveries`, so any worker can die at any point and the
 * next sweep puts things right.
 */
@Injectable()
export class DeliveryStore {
  private readonly delays: number[];

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(DELIVERY_OPTIONS) private readonly options: ResolvedDeliveryOptions,
  ) {
    this.delays = delaysInSeconds(options.retryDelaysMs);
  }

  /**
   * Claims up to `limit` due deliveries of enabled endpoints (oldest due first; rows another worker
   * holds are skipped), reserves a unit of allowance for each real event, and leases them as
   * `sending`. A delivery whose account has no allowance left waits (`waiting_reason: "allowance"`)
   * without using an attempt.
   */
  async claim(limit: number, saturated: readonly string[]): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return [];
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<ClaimRow>(
        `SELECT d.id, d.subscription_id, d.account_id, d.event_id, d.event_type, d.payload, s.url,
                s.secret_ciphertext, s.secret_key_id,
                CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret_ciphertext END AS previous_ciphertext,
                CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret_key_id END AS previous_key_id
           FROM webhook_deliveries d
           JOIN webhook_subscriptions s ON s.id = d.subscription_id AND s.enabled
          WHERE d.status = 'pending' AND d.waiting_reason IS NULL AND d.next_attempt_at <= now()
            AND NOT (d.subscription_id = ANY($2::uuid[]))
          ORDER BY d.next_attempt_at, d.created_at, d.id
          LIMIT $1
          FOR UPDATE OF d SKIP LOCKED
          FOR KEY SHARE OF s SKIP LOCKED`,
        [limit, saturated],
      );
      if (rows.length === 0) return [];
      const limits = new Map<string, number | null>();
      const claimed: ClaimedDelivery[] = [];
      const waiting: string[] = [];
      for (const row of rows) {
        let reservation: Reservation | null = null;
        if (row.event_type !== EventTypes.WebhookTest) {
          if (!limits.has(row.account_id)) {
            limits.set(row.account_id, (await planInForce(pgRunner(client), row.account_id))?.plan.monthlyLimit ?? null);
          }
          const limit = limits.get(row.account_id);
          const reserved = limit == null ? null : await reserveUsage(pgRunner(client), { accountId: row.account_id, limit });
          if (!reserved?.ok) {
            waiting.push(row.id);
            continue;
          }
          reservation = reserved.reservation;
        }
        claimed.push({
          id: row.id,
          subscriptionId: row.subscription_id,
          accountId: row.account_id,
          eventId: row.event_id,
          eventType: row.event_type,
          payload: row.payload,
          url: row.url,
          secret: { ciphertext: row.secret_ciphertext, keyId: row.secret_key_id },
          previousSecret:
            row.previous_ciphertext && row.previous_key_id ? { ciphertext: row.previous_ciphertext, keyId: row.previous_key_id } : null,
          leaseToken: randomUUID(),
          reservation,
        });
      }
      if (waiting.length > 0) {
        await client.query(
          `UPDATE webhook_deliveries SET waiting_reason = 'allowance', updated_at = now() WHERE id = ANY($1::uuid[])`,
          [waiting],
        );
      }
      if (claimed.length > 0) {
        await client.query(
          `UPDATE webhook_deliveries AS d
              SET status = 'sending', lease_token = c.token, reserved_period = c.period,
                  lease_expires_at = now() + make_interval(secs => $2::float8), updated_at = now()
             FROM unnest($1::uuid[], $3::uuid[], $4::text[]) AS c(id, token, period)
            WHERE d.id = c.id`,
          [
            claimed.map((c) => c.id),
            this.options.leaseMs / 1000,
            claimed.map((c) => c.leaseToken),
            claimed.map((c) => c.reservation?.period ?? null),
          ],
        );
      }
      return claimed;
    });
  }

  /**
   * Records an attempt's outcome — only while this worker still holds the lease. Success commits
   * the unit held (charged once); failure releases it and schedules the next attempt, or ends the
   * delivery `failed` after the last one of its budget; a failure on an endpoint paused meanwhile
   * ends it `canceled`. Returns the delivery's new status, or null when the lease was lost.
   */
  async record(delivery: ClaimedDelivery, outcome: AttemptOutcome): Promise<string | null> {
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ status: string }>(
        `UPDATE webhook_deliveries AS d
            SET status = CASE WHEN $3 THEN 'succeeded'
                              WHEN NOT s.enabled THEN 'canceled'
                              WHEN d.attempts + 1 >= d.max_attempts THEN 'failed'
                              ELSE 'pending' END,
                next_attempt_at = CASE WHEN $3 OR NOT s.enabled OR d.attempts + 1 >= d.max_attempts THEN NULL
                                       ELSE ${nextAttemptSql('$9', '$10')} END,
                attempts = d.attempts + 1,
                last_attempt_at = now() - make_interval(secs => $8::float8 / 1000),
                last_response_status = $4, last_error = $5, last_response_excerpt = $6, last_duration_ms = $7,
                lease_token = NULL, lease_expires_at = NULL, reserved_period = NULL, updated_at = now()
           FROM webhook_subscriptions s
          WHERE d.id = $1 AND d.lease_token = $2 AND s.id = d.subscription_id
          RETURNING d.status`,
        [
          delivery.id,
          delivery.leaseToken,
          outcome.succeeded,
          outcome.status,
          outcome.error,
          outcome.excerpt,
          Math.round(outcome.durationMs),
          outcome.durationMs,
          this.delays,
          this.options.retryJitter,
        ],
      );
      const status = rows[0]?.status ?? null;
      if (status === null) return null; // the lease expired and the sweep took the delivery (and its unit) back
      if (delivery.reservation) {
        if (outcome.succeeded) await commitUsage(pgRunner(client), delivery.reservation);
        else await releaseUsage(pgRunner(client), delivery.reservation);
      }
      await client.query(
        outcome.succeeded
          ? `UPDATE webhook_subscriptions SET consecutive_failures = 0, last_success_at = now() WHERE id = $1`
          : `UPDATE webhook_subscriptions SET consecutive_failures = consecutive_failures + 1, last_failure_at = now() WHERE id = $1`,
        [delivery.subscriptionId],
      );
      return status;
    });
  }

  /**
   * Attempts whose lease expired (their worker died or hung): counted as a failed attempt
   * (`interrupted`) and scheduled like one, their unit of allowance released.
   */
  async recoverExpired(): Promise<number> {
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ account_id: string; reserved_period: string | null }>(
        `WITH expired AS (
           SELECT id, account_id, reserved_period FROM webhook_deliveries
            WHERE status = 'sending' AND lease_expires_at < now()
            ORDER BY lease_expires_at LIMIT 500
            FOR UPDATE SKIP LOCKED
         )
         UPDATE webhook_deliveries AS d
            SET status = CASE WHEN NOT s.enabled THEN 'canceled' WHEN d.attempts + 1 >= d.max_attempts THEN 'failed' ELSE 'pending' END,
                next_attempt_at = CASE WHEN NOT s.enabled OR d.attempts + 1 >= d.max_attempts THEN NULL
                                       ELSE ${nextAttemptSql('$1', '$2')} END,
                attempts = d.attempts + 1, last_error = 'interrupted', last_attempt_at = d.updated_at,
                last_response_status = NULL, last_response_excerpt = NULL, last_duration_ms = NULL,
                lease_token = NULL, lease_expires_at = NULL, reserved_period = NULL, updated_at = now()
           FROM expired, webhook_subscriptions s
          WHERE d.id = expired.id AND s.id = d.subscription_id
          RETURNING expired.account_id, expired.reserved_period`,
        [this.delays, this.options.retryJitter],
      );
      for (const row of rows) {
        if (row.reserved_period) {
          await releaseUsage(pgRunner(client), { accountId: row.account_id, period: row.reserved_period, units: 1 });
        }
      }
      return rows.length;
    });
  }

  /**
   * Deliveries waiting on an exhausted allowance go back to the schedule (in their original order)
   * for every account that has room again — an upgrade, or a new billing period.
   */
  async releaseAllowanceWaits(onlyAccount?: string): Promise<number> {
    const { rows: accounts } = await this.pool.query<{ account_id: string }>(
      `SELECT DISTINCT account_id FROM webhook_deliveries
        WHERE waiting_reason = 'allowance' AND ($1::uuid IS NULL OR account_id = $1)`,
      [onlyAccount ?? null],
    );
    let released = 0;
    for (const { account_id: accountId } of accounts) {
      const inForce = await planInForce(pgRunner(this.pool), accountId);
      if (!inForce) continue;
      const usage = await getUsage(pgRunner(this.pool), accountId);
      const room = inForce.plan.monthlyLimit - usage.used - usage.reserved;
      if (room <= 0) continue;
      const { rowCount } = await this.pool.query(
        `UPDATE webhook_deliveries SET waiting_reason = NULL, updated_at = now()
          WHERE id IN (SELECT id FROM webhook_deliveries WHERE account_id = $1 AND waiting_reason = 'allowance'
                        ORDER BY next_attempt_at, created_at, id LIMIT $2)`,
        [accountId, room],
      );
      released += rowCount ?? 0;
    }
    return released;
  }

  /** For tests and readiness: deliveries due now. */
  async dueCount(client: Pool | PoolClient = this.pool): Promise<number> {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending' AND waiting_reason IS NULL AND next_attempt_at <= now()`,
    );
    return rows[0].n;
  }
}
