import { Injectable } from '@nestjs/common';
import { rows, Sql } from '@cars/persistence';
import { PoolClient } from 'pg';
import { nextAttemptSql } from './schedule';

/** A due delivery the fair claim picked and leased, with its endpoint's signing material. */
export interface DueDeliveryRow {
  id: string;
  /** The lease's token: only this claim may record the attempt's outcome. */
  lease_token: string;
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
  probe: boolean;
  failing: boolean;
}

/** What the fair claim may take, and the lease it puts on what it takes: see `DispatchRepository.claimDueFairly`. */
export interface FairPick {
  limit: number;
  /** How long the lease lasts. */
  leaseSeconds: number;
  /** The billing period whose unit each delivery holds (recorded on the row); none for the event type given. */
  period: string;
  freeEventType: string;
  /** Endpoints whose circuit this claim just turned `half_open`: one delivery each. */
  probes: readonly string[];
  /** What this worker already holds, per endpoint and per account. */
  heldEndpoints: readonly (readonly [string, number])[];
  heldAccounts: readonly (readonly [string, number])[];
  /** Endpoints failing here (maybe not recorded yet): one attempt at a time. */
  failing: readonly string[];
  /** Per endpoint, while it succeeds. */
  prefetch: number;
  /** Per account. */
  accountShare: number;
}

/** An attempt's outcome as recorded. */
export interface AttemptRecord {
  id: string;
  leaseToken: string;
  succeeded: boolean;
  status: number | null;
  error: string | null;
  excerpt: string | null;
  durationMs: number;
}

/** An endpoint's health as the recording of a batch leaves it. */
export interface EndpointHealth {
  id: string;
  consecutiveFailures: number;
  succeeded: boolean;
  failed: boolean;
  state: string;
  /** Seconds the circuit (re)opens for, or null. */
  openForSeconds: number | null;
  opens: number;
}

/** The retry schedule as SQL parameters: delays in seconds, and the jitter fraction. */
export interface RetrySchedule {
  delaysSeconds: readonly number[];
  jitter: number;
}

/**
 * The endpoints of the attempts just recorded (CTE `recorded`), when `$10` says every one
 * succeeded: failures in a row cleared, circuit closed, last success now — locked in id order, as
 * `lockHealth` and `writeSucceeded` take them.
 */
const SUCCEEDED_HEALTH_SQL = `locked AS (
         SELECT id FROM webhook_subscriptions
          WHERE $10::boolean AND id IN (SELECT subscription_id FROM recorded) ORDER BY id FOR NO KEY UPDATE
       ), healthy AS (
         UPDATE webhook_subscriptions AS s
            SET consecutive_failures = 0, last_success_at = now(),
                circuit_state = 'closed', circuit_open_until = NULL, circuit_opened_at = NULL, circuit_opens = 0
           FROM locked WHERE s.id = locked.id
       )`;

/**
 * The SQL of the delivery worker over `webhook_deliveries` and `webhook_subscriptions`: claims,
 * leases, outcomes, endpoint health and circuits, recoveries and waits. Every statement runs on
 * the handle given — the caller's transaction when it composes them with the usage ledger.
 */
@Injectable()
export class DispatchRepository {
  /**
   * Endpoints whose open circuit's backoff is over and that have a due delivery: this worker takes
   * their probe (the circuit turns `half_open`, leased for `leaseSeconds`). Endpoints it holds
   * already are left alone; rows another worker holds are skipped.
   */
  async openProbes(tx: PoolClient, leaseSeconds: number, heldEndpoints: readonly string[]): Promise<string[]> {
    // Named: prepared once per connection, not planned again at every claim.
    const { rows: probing } = await tx.query<{ id: string }>({
      name: 'delivery-claim-probes',
      text: `WITH due AS (
           SELECT s.id FROM webhook_subscriptions s
            CROSS JOIN LATERAL (
              SELECT 1 FROM webhook_deliveries d
               WHERE d.subscription_id = s.id AND d.status = 'pending' AND d.waiting_reason IS NULL AND d.next_attempt_at <= now()
               ORDER BY d.attempts > 0, d.next_attempt_at LIMIT 1
            ) AS waiting
            WHERE s.circuit_state <> 'closed' AND s.circuit_open_until <= now() AND s.enabled
              AND NOT (s.id = ANY($2::uuid[]))
            FOR NO KEY UPDATE OF s SKIP LOCKED
         )
         UPDATE webhook_subscriptions AS s
            SET circuit_state = 'half_open', circuit_open_until = now() + make_interval(secs => $1::float8)
           FROM due WHERE s.id = due.id
         RETURNING s.id`,
      values: [leaseSeconds, heldEndpoints],
    });
    return probing.map((row) => row.id);
  }

  /**
   * Up to `limit` due deliveries, picked fairly and leased as `sending` in the same statement (rows
   * another worker holds are skipped), each under a new token and holding a unit of `period`
   * (none for `freeEventType`):
   * - per endpoint, a short index range (`webhook_deliveries_fair_idx`): its due first attempts
   *   before its due retries, oldest first, up to what the endpoint may hold — `prefetch` while
   *   its last attempt succeeded, one while it is failing or probed — less what is held of it;
   * - endpoints take turns: every endpoint's first pick before anyone's second, first attempts
   *   before retries across endpoints;
   * - an account gets at most `accountShare`, less what it holds;
   * - an endpoint whose circuit is open is skipped, unless it is probed.
   * Returned in the pick's order. Run it with `enable_sort = off` and `jit = off` (see the
   * caller's settings).
   */
  async claimDueFairly(tx: PoolClient, pick: FairPick): Promise<DueDeliveryRow[]> {
    const { rows: picked } = await tx.query<DueDeliveryRow & { rank: string }>({
      name: 'delivery-claim',
      text: `WITH candidates AS (
           SELECT c.id, s.id AS subscription_id, s.account_id, c.event_id, c.event_type, c.payload, c.attempts > 0 AS retry,
                  c.next_attempt_at, s.url, s.secret_ciphertext, s.secret_key_id,
                  CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret_ciphertext END AS previous_ciphertext,
                  CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret_key_id END AS previous_key_id,
                  s.id = ANY($2::uuid[]) AS probe,
                  s.consecutive_failures > 0 OR s.id = ANY($2::uuid[]) OR s.id = ANY($9::uuid[]) AS failing
             FROM (SELECT s.*, count(*) OVER (PARTITION BY s.account_id) AS siblings
                     FROM webhook_subscriptions s
                    CROSS JOIN LATERAL (
                      SELECT 1 FROM webhook_deliveries d
                       WHERE d.subscription_id = s.id AND d.status = 'pending' AND d.waiting_reason IS NULL AND d.next_attempt_at <= now()
                       ORDER BY d.attempts > 0, d.next_attempt_at LIMIT 1 -- the order of webhook_deliveries_fair_idx: one index probe
                    ) AS due
                    WHERE s.enabled AND (s.circuit_state = 'closed' OR s.id = ANY($2::uuid[]))) AS s
             LEFT JOIN unnest($3::uuid[], $4::int[]) AS h(id, n) ON h.id = s.id
             LEFT JOIN unnest($6::uuid[], $7::int[]) AS a(id, n) ON a.id = s.account_id
            CROSS JOIN LATERAL (
              SELECT d.id, d.event_id, d.event_type, d.payload, d.attempts, d.next_attempt_at
                FROM webhook_deliveries d
               WHERE d.subscription_id = s.id AND d.status = 'pending' AND d.waiting_reason IS NULL AND d.next_attempt_at <= now()
               ORDER BY d.attempts > 0, d.next_attempt_at
               -- Its part of the account's room, shared by its endpoints with due work (rows are locked as they are read), …
               LIMIT least($1::int, ceil(greatest(0, $8::int - coalesce(a.n, 0))::numeric / s.siblings)::int,
                           -- … and of its own: one for a probe or a failing endpoint, else the prefetch.
                           CASE WHEN s.id = ANY($2::uuid[]) THEN 1
                                WHEN s.consecutive_failures > 0 OR s.id = ANY($9::uuid[]) THEN greatest(0, 1 - coalesce(h.n, 0))
                                ELSE greatest(0, $5::int - coalesce(h.n, 0)) END)
               FOR UPDATE OF d SKIP LOCKED
            ) c
         ), turns AS (
           SELECT c.*, row_number() OVER (PARTITION BY c.subscription_id ORDER BY c.retry, c.next_attempt_at, c.id) AS turn
             FROM candidates c
         ), shares AS (
           SELECT t.*, row_number() OVER (PARTITION BY t.account_id ORDER BY t.retry, t.turn, t.next_attempt_at, t.id) AS share
             FROM turns t
         ), picked AS (
           SELECT x.*, row_number() OVER (ORDER BY x.retry, x.turn, x.next_attempt_at, x.id) AS rank
             FROM shares x
             LEFT JOIN unnest($6::uuid[], $7::int[]) AS a(id, n) ON a.id = x.account_id
            WHERE x.share <= $8::int - coalesce(a.n, 0)
            ORDER BY x.retry, x.turn, x.next_attempt_at, x.id
            LIMIT $1
         )
         UPDATE webhook_deliveries AS d
            SET status = 'sending', lease_token = gen_random_uuid(),
                reserved_period = CASE WHEN p.event_type <> $12 THEN $11::text END,
                lease_expires_at = now() + make_interval(secs => $10::float8), updated_at = now()
           FROM picked p
          WHERE d.id = p.id
         RETURNING p.rank, d.id, d.lease_token, p.subscription_id, p.account_id, p.event_id, p.event_type, p.payload, p.url,
                   p.secret_ciphertext, p.secret_key_id, p.previous_ciphertext, p.previous_key_id, p.probe, p.failing`,
      values: [
        pick.limit,
        pick.probes,
        pick.heldEndpoints.map(([id]) => id),
        pick.heldEndpoints.map(([, n]) => n),
        pick.prefetch,
        pick.heldAccounts.map(([id]) => id),
        pick.heldAccounts.map(([, n]) => n),
        pick.accountShare,
        pick.failing,
        pick.leaseSeconds,
        pick.period,
        pick.freeEventType,
      ],
    });
    // UPDATE … RETURNING keeps no order: the pick's is its rank.
    return picked.sort((a, b) => Number(a.rank) - Number(b.rank)).map(({ rank: _rank, ...row }) => row);
  }

  /**
   * Claimed deliveries whose account has no allowance left: back to `pending`, their lease
   * undone, waiting (`waiting_reason: "allowance"`) without using an attempt.
   */
  async waitForAllowance(tx: Sql, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await tx.query(
      `UPDATE webhook_deliveries
          SET status = 'pending', lease_token = NULL, lease_expires_at = NULL, reserved_period = NULL,
              waiting_reason = 'allowance', updated_at = now()
        WHERE id = ANY($1::uuid[])`,
      [ids],
    );
  }

  /**
   * Attempts' outcomes, for the deliveries whose lease the token still names: success ends the
   * delivery `succeeded`; a failure schedules the next attempt, or ends it `failed` after the last
   * of its budget, or `canceled` when its endpoint was paused meanwhile. Returns the ids recorded.
   * With `allSucceeded` (every attempt given succeeded), the same statement also writes the health
   * of the endpoints whose attempts it recorded, as `writeSucceeded` does: one round trip fewer
   * for the common batch.
   */
  async recordOutcomes(
    tx: Sql,
    attempts: readonly AttemptRecord[],
    schedule: RetrySchedule,
    options: { allSucceeded?: boolean } = {},
  ): Promise<Set<string>> {
    // Named: prepared once per connection, and planned once (a generic plan) rather than at every batch.
    const { rows: recorded } = await tx.query<{ id: string }>({
      name: 'delivery-record',
      text: `WITH recorded AS (
         UPDATE webhook_deliveries AS d
            SET status = CASE WHEN c.ok THEN 'succeeded'
                              WHEN NOT s.enabled THEN 'canceled'
                              WHEN d.attempts + 1 >= d.max_attempts THEN 'failed'
                              ELSE 'pending' END,
                next_attempt_at = CASE WHEN c.ok OR NOT s.enabled OR d.attempts + 1 >= d.max_attempts THEN NULL
                                       ELSE ${nextAttemptSql('$8', '$9')} END,
                attempts = d.attempts + 1,
                last_attempt_at = now() - make_interval(secs => c.duration / 1000),
                last_response_status = c.status, last_error = c.error, last_response_excerpt = c.excerpt,
                last_duration_ms = round(c.duration)::int,
                lease_token = NULL, lease_expires_at = NULL, reserved_period = NULL, updated_at = now()
           FROM unnest($1::uuid[], $2::uuid[], $3::boolean[], $4::int[], $5::text[], $6::text[], $7::float8[])
                  AS c(id, token, ok, status, error, excerpt, duration),
                webhook_subscriptions s
          WHERE d.id = c.id AND d.lease_token = c.token AND s.id = d.subscription_id
          RETURNING d.id, d.subscription_id
       ), ${SUCCEEDED_HEALTH_SQL}
       SELECT id FROM recorded`,
      values: [
        attempts.map((a) => a.id),
        attempts.map((a) => a.leaseToken),
        attempts.map((a) => a.succeeded),
        attempts.map((a) => a.status),
        attempts.map((a) => a.error),
        attempts.map((a) => a.excerpt),
        attempts.map((a) => a.durationMs),
        schedule.delaysSeconds,
        schedule.jitter,
        options.allSucceeded === true && attempts.every((a) => a.succeeded),
      ],
    });
    return new Set(recorded.map((row) => row.id));
  }

  /** The endpoints' health, locked in id order (concurrent batches take them in the same order), read as committed. */
  lockHealth(
    tx: Sql,
    ids: readonly string[],
  ): Promise<{ id: string; consecutive_failures: number; circuit_state: string; circuit_opens: number }[]> {
    return rows(
      tx,
      `SELECT id, consecutive_failures, circuit_state, circuit_opens FROM webhook_subscriptions
            WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE`,
      [[...ids].sort()],
    );
  }

  /** Failures since the last success, when each last happened, and the circuit. */
  async writeHealth(tx: Sql, health: readonly EndpointHealth[]): Promise<void> {
    if (health.length === 0) return;
    await tx.query(
      `UPDATE webhook_subscriptions AS s
              SET consecutive_failures = u.failures,
                  last_success_at = CASE WHEN u.succeeded THEN now() ELSE s.last_success_at END,
                  last_failure_at = CASE WHEN u.failed THEN now() ELSE s.last_failure_at END,
                  circuit_state = u.state,
                  circuit_open_until = CASE WHEN u.open_for IS NOT NULL THEN now() + make_interval(secs => u.open_for)
                                            WHEN u.state = 'closed' THEN NULL ELSE s.circuit_open_until END,
                  circuit_opened_at = CASE WHEN u.state = 'closed' THEN NULL
                                           WHEN u.open_for IS NOT NULL THEN coalesce(s.circuit_opened_at, now()) ELSE s.circuit_opened_at END,
                  circuit_opens = u.opens
             FROM unnest($1::uuid[], $2::int[], $3::boolean[], $4::boolean[], $5::text[], $6::float8[], $7::int[])
                    AS u(id, failures, succeeded, failed, state, open_for, opens)
            WHERE s.id = u.id`,
      [
        health.map((h) => h.id),
        health.map((h) => h.consecutiveFailures),
        health.map((h) => h.succeeded),
        health.map((h) => h.failed),
        health.map((h) => h.state),
        health.map((h) => h.openForSeconds),
        health.map((h) => h.opens),
      ],
    );
  }

  /**
   * Endpoints whose batch ended with a success: no failures in a row, circuit closed, last success
   * now (and last failure now, for those with a failure before it). Locked in id order, as
   * `lockHealth` takes them.
   */
  async writeSucceeded(tx: Sql, endpoints: readonly { id: string; failed: boolean }[]): Promise<void> {
    if (endpoints.length === 0) return;
    await tx.query(
      `WITH locked AS (
         SELECT id FROM webhook_subscriptions WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE
       )
       UPDATE webhook_subscriptions AS s
          SET consecutive_failures = 0, last_success_at = now(),
              last_failure_at = CASE WHEN u.failed THEN now() ELSE s.last_failure_at END,
              circuit_state = 'closed', circuit_open_until = NULL, circuit_opened_at = NULL, circuit_opens = 0
         FROM locked JOIN unnest($1::uuid[], $2::boolean[]) AS u(id, failed) ON u.id = locked.id
        WHERE s.id = locked.id`,
      [endpoints.map((e) => e.id), endpoints.map((e) => e.failed)],
    );
  }

  /** Claimed deliveries never sent go back to the schedule as they were (those whose lease the token still names). Returns their ids. */
  async unlease(tx: Sql, leases: readonly { id: string; token: string }[]): Promise<Set<string>> {
    const back = await rows<{ id: string }>(
      tx,
      `UPDATE webhook_deliveries AS d
            SET status = 'pending', lease_token = NULL, lease_expires_at = NULL, reserved_period = NULL, updated_at = now()
           FROM unnest($1::uuid[], $2::uuid[]) AS c(id, token)
          WHERE d.id = c.id AND d.lease_token = c.token
          RETURNING d.id`,
      [leases.map((d) => d.id), leases.map((d) => d.token)],
    );
    return new Set(back.map((row) => row.id));
  }

  /** A probe never sent: the circuit is open again, its probe due at once. */
  async reopenUnsentProbes(tx: Sql, subscriptionIds: readonly string[]): Promise<void> {
    if (subscriptionIds.length === 0) return;
    await tx.query(
      `UPDATE webhook_subscriptions SET circuit_state = 'open', circuit_open_until = now()
            WHERE id = ANY($1::uuid[]) AND circuit_state = 'half_open'`,
      [subscriptionIds],
    );
  }

  /**
   * Up to 500 attempts whose lease expired (their worker died or hung): counted as a failed
   * attempt (`interrupted`) and scheduled like one. Returns each one's account and the billing
   * period of the unit it held (to be released).
   */
  recoverExpired(tx: Sql, schedule: RetrySchedule): Promise<{ account_id: string; reserved_period: string | null }[]> {
    return rows(
      tx,
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
      [schedule.delaysSeconds, schedule.jitter],
    );
  }

  /** Accounts with deliveries waiting on an exhausted allowance (all, or only the one given). */
  async accountsWaitingForAllowance(db: Sql, onlyAccount?: string): Promise<string[]> {
    const found = await rows<{ account_id: string }>(
      db,
      `SELECT DISTINCT account_id FROM webhook_deliveries
        WHERE waiting_reason = 'allowance' AND ($1::uuid IS NULL OR account_id = $1)`,
      [onlyAccount ?? null],
    );
    return found.map((row) => row.account_id);
  }

  /** Up to `room` of the account's deliveries waiting on its allowance go back to the schedule, in their original order. */
  async releaseAllowanceWaits(db: Sql, accountId: string, room: number): Promise<number> {
    const { rowCount } = await db.query(
      `UPDATE webhook_deliveries SET waiting_reason = NULL, updated_at = now()
          WHERE id IN (SELECT id FROM webhook_deliveries WHERE account_id = $1 AND waiting_reason = 'allowance'
                        ORDER BY next_attempt_at, created_at, id LIMIT $2)`,
      [accountId, room],
    );
    return rowCount ?? 0;
  }

  /**
   * Make maintenance decided: deliveries waiting for an unknown make are
   * released when the listed spelling now resolves — through an alias or a canonical name, case and
   * spacing aside — to the make the subscription filters on, and dropped when it resolves to another
   * make or is confirmed as no make (an exclusion). The rest keep waiting. Returns what was decided.
   */
  async resolveMakeWaits(tx: Sql): Promise<{ released: number; dropped: number }> {
    const [decided] = await rows<{ released: number; dropped: number }>(
      tx,
      `WITH waiting AS (
           SELECT d.id, s.filters ->> 'make' AS wanted, lower(regexp_replace(trim(e.listed_make), '[[:space:]]+', ' ', 'g')) AS listed
             FROM webhook_deliveries d
             JOIN webhook_subscriptions s ON s.id = d.subscription_id
             JOIN events e ON e.id = d.event_id
            WHERE d.waiting_reason = 'make'
            ORDER BY d.created_at LIMIT 1000
            FOR UPDATE OF d SKIP LOCKED
         ), decided AS (
           SELECT w.id,
                  CASE WHEN alias.excluded THEN 'drop'
                       WHEN coalesce(aliased.name, canonical.name) IS NULL THEN NULL
                       WHEN lower(coalesce(aliased.name, canonical.name)) = lower(w.wanted) THEN 'release'
                       ELSE 'drop' END AS verdict
             FROM waiting w
             LEFT JOIN make_aliases alias ON lower(regexp_replace(trim(alias.alias), '[[:space:]]+', ' ', 'g')) = w.listed
             LEFT JOIN makes aliased ON aliased.id = alias.make_id
             LEFT JOIN makes canonical ON lower(canonical.name) = w.listed
         ), released AS (
           UPDATE webhook_deliveries d SET waiting_reason = NULL, next_attempt_at = now(), updated_at = now()
             FROM decided WHERE d.id = decided.id AND decided.verdict = 'release' RETURNING 1
         ), dropped AS (
           DELETE FROM webhook_deliveries d USING decided WHERE d.id = decided.id AND decided.verdict = 'drop' RETURNING 1
         )
         SELECT (SELECT count(*)::int FROM released) AS released, (SELECT count(*)::int FROM dropped) AS dropped`,
    );
    return decided;
  }

  /** Deliveries due now (tests and readiness). */
  async dueCount(db: Sql): Promise<number> {
    const [{ n }] = await rows<{ n: number }>(
      db,
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending' AND waiting_reason IS NULL AND next_attempt_at <= now()`,
    );
    return n;
  }
}
