import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { commitUsage, getUsage, planInForce, releaseUsage, Reservation, reserveUsage } from '@cars/accounts';
import { EventTypes } from '@cars/contracts';
import { PG_POOL, withTransaction } from '@cars/persistence';
import { Pool, PoolClient } from 'pg';
import { DELIVERY_OPTIONS, PREFETCH_FACTOR, ResolvedDeliveryOptions } from '../config/delivery.options';
import { circuitOpens, interruptedAttempts } from '../metrics/delivery.metrics';
import { AttemptOutcome } from './attempt-outcome';
import { afterAttempts, AttemptTally, CircuitPolicy, CircuitState } from './circuit';
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
  /** The one attempt a half-open circuit lets through: its outcome closes or reopens the circuit. */
  probe: boolean;
  /** Attempts the endpoint may have in flight: the full cap, or one while it is failing. */
  inFlightCap: number;
}

/** What this worker already holds (queued or in flight), per endpoint and per account. */
export interface Holdings {
  endpoints: ReadonlyMap<string, number>;
  accounts: ReadonlyMap<string, number>;
  /** Endpoints whose last attempt here failed, maybe not recorded yet: one attempt at a time. */
  failing?: ReadonlySet<string>;
}

/** What recording a batch came to. */
export interface Recorded {
  /** Deliveries recorded (a lost lease means the sweep took the delivery and its unit back). */
  ids: Set<string>;
  /** Endpoints whose circuit is open after the batch: their queued deliveries go back unsent. */
  openCircuits: Set<string>;
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
  probe: boolean;
  failing: boolean;
}

/**
 * The claim's transaction: each endpoint's range must come from webhook_deliveries_fair_idx in its
 * order, never from another index and a sort of everything the endpoint has due — which the
 * planner may pick when the table's statistics are stale (a new database, a sudden backlog). The
 * sorts that remain (a few hundred rows at most) then look costly enough to JIT-compile: no JIT.
 */
const CLAIM_SETTINGS = ['enable_sort = off', 'jit = off'];

/**
 * The delivery rows are the truth (DESIGN §6): claims, leases, outcomes and the allowance held by
 * attempts in flight all live in `webhook_deliveries`, so any worker can die at any point and the
 * next sweep puts things right.
 */
@Injectable()
export class DeliveryStore {
  private readonly delays: number[];
  private readonly circuitPolicy: CircuitPolicy;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(DELIVERY_OPTIONS) private readonly options: ResolvedDeliveryOptions,
  ) {
    this.delays = delaysInSeconds(options.retryDelaysMs);
    this.circuitPolicy = { failures: options.circuitFailures, backoffMs: options.circuitBackoffMs, maxBackoffMs: options.circuitMaxBackoffMs };
  }

  /**
   * Claims, outcomes and recoveries commit without waiting for the WAL flush: if the database
   * crashes and loses one, the delivery and the ledger lose it together (same transaction), and
   * the delivery is simply attempted again — at least once, charged once.
   */
  private transaction<T>(work: (client: PoolClient) => Promise<T>, settings?: readonly string[]): Promise<T> {
    return withTransaction(this.pool, work, { asyncCommit: true, settings });
  }

  /**
   * Claims up to `limit` due deliveries fairly, reserves a unit of allowance for each real event,
   * and leases them as `sending`:
   * - per endpoint, a short index range (`webhook_deliveries_fair_idx`): its due first attempts
   *   before its due retries, oldest first, up to what the endpoint may hold — the full prefetch
   *   (`perEndpointConcurrency` × `PREFETCH_FACTOR`) while its last attempt succeeded, one while it
   *   is failing — less what this worker already holds of it;
   * - endpoints take turns: every endpoint's first pick before anyone's second, first attempts
   *   before retries across endpoints, so a fresh delivery of a quiet endpoint is in the next claim
   *   whatever the backlog of others;
   * - an account gets at most `accountConcurrency` × `PREFETCH_FACTOR`, less what it holds here;
   * - an endpoint whose circuit is open is skipped; once its backoff is over, one worker takes the
   *   probe (the circuit turns `half_open`, leased like an attempt) and claims one delivery.
   * Rows another worker holds are skipped. A delivery whose account has no allowance left waits
   * (`waiting_reason: "allowance"`) without using an attempt; so does every delivery of an endpoint
   * whose circuit is open.
   */
  async claim(limit: number, held: Holdings = { endpoints: new Map(), accounts: new Map() }): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return [];
    const prefetch = this.options.perEndpointConcurrency * PREFETCH_FACTOR;
    const accountShare = this.options.accountConcurrency * PREFETCH_FACTOR;
    const heldEndpoints = [...held.endpoints];
    const heldAccounts = [...held.accounts];
    return this.transaction(async (client) => {
      // Named: prepared once per connection, not planned again at every claim.
      const { rows: probing } = await client.query<{ id: string }>({
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
        values: [this.options.leaseMs / 1000, heldEndpoints.map(([id]) => id)],
      });
      const { rows } = await client.query<ClaimRow>({
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
         )
         SELECT x.id, x.subscription_id, x.account_id, x.event_id, x.event_type, x.payload, x.url, x.secret_ciphertext,
                x.secret_key_id, x.previous_ciphertext, x.previous_key_id, x.probe, x.failing
           FROM shares x
           LEFT JOIN unnest($6::uuid[], $7::int[]) AS a(id, n) ON a.id = x.account_id
          WHERE x.share <= $8::int - coalesce(a.n, 0)
          ORDER BY x.retry, x.turn, x.next_attempt_at, x.id
          LIMIT $1`,
        values: [
          limit,
          probing.map((row) => row.id),
          heldEndpoints.map(([id]) => id),
          heldEndpoints.map(([, n]) => n),
          prefetch,
          heldAccounts.map(([id]) => id),
          heldAccounts.map(([, n]) => n),
          accountShare,
          [...(held.failing ?? [])],
        ],
      });
      if (rows.length === 0) return [];
      // One reservation per account for all its claimed rows when there is room; near the end of
      // an allowance, one unit at a time until it runs out (the rest wait).
      const periods = new Map<string, string | null>();
      const byAccount = new Map<string, ClaimRow[]>();
      for (const row of rows) {
        if (row.event_type === EventTypes.WebhookTest) continue;
        byAccount.set(row.account_id, [...(byAccount.get(row.account_id) ?? []), row]);
      }
      for (const [accountId, accountRows] of byAccount) {
        const limit = (await planInForce(client, accountId))?.plan.monthlyLimit;
        if (limit === undefined) continue;
        const all = await reserveUsage(client, { accountId, limit, units: accountRows.length });
        if (all.ok) {
          for (const row of accountRows) periods.set(row.id, all.reservation.period);
          continue;
        }
        for (const row of accountRows) {
          const one = await reserveUsage(client, { accountId, limit });
          if (!one.ok) break;
          periods.set(row.id, one.reservation.period);
        }
      }
      const claimed: ClaimedDelivery[] = [];
      const waiting: string[] = [];
      for (const row of rows) {
        let reservation: Reservation | null = null;
        if (row.event_type !== EventTypes.WebhookTest) {
          const period = periods.get(row.id);
          if (!period) {
            waiting.push(row.id);
            continue;
          }
          reservation = { accountId: row.account_id, period, units: 1 };
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
          probe: row.probe,
          inFlightCap: row.failing ? 1 : this.options.perEndpointConcurrency,
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
    }, CLAIM_SETTINGS);
  }

  /**
   * Records attempts' outcomes, many in one transaction — only those whose lease this worker still
   * holds. Success commits the unit held (charged once); failure releases it and schedules the
   * next attempt, or ends the delivery `failed` after the last one of its budget; a failure on an
   * endpoint paused meanwhile ends it `canceled`. Endpoint health and circuits follow, in the same
   * transaction: `circuitFailures` failed attempts in a row open an endpoint's circuit for
   * `circuitBackoffMs`; a failed probe reopens it for twice as long as the last time (up to
   * `circuitMaxBackoffMs`); a success closes it.
   */
  async record(results: readonly { delivery: ClaimedDelivery; outcome: AttemptOutcome }[]): Promise<Recorded> {
    if (results.length === 0) return { ids: new Set(), openCircuits: new Set() };
    return this.transaction(async (client) => {
      const { rows } = await client.query<{ id: string }>(
        `UPDATE webhook_deliveries AS d
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
          RETURNING d.id`,
        [
          results.map((r) => r.delivery.id),
          results.map((r) => r.delivery.leaseToken),
          results.map((r) => r.outcome.succeeded),
          results.map((r) => r.outcome.status),
          results.map((r) => r.outcome.error),
          results.map((r) => r.outcome.excerpt),
          results.map((r) => r.outcome.durationMs),
          this.delays,
          this.options.retryJitter,
        ],
      );
      const recorded = new Set(rows.map((row) => row.id));
      const mine = results.filter((r) => recorded.has(r.delivery.id));

      await settleUnits(client, mine.map((r) => ({ reservation: r.delivery.reservation, commit: r.outcome.succeeded })));

      // Endpoint health: failures since the last success, and when each last happened; the circuit.
      const health = new Map<string, AttemptTally>();
      for (const { delivery, outcome } of mine) {
        const h = health.get(delivery.subscriptionId) ?? { succeeded: 0, failed: 0, tail: 0, probeFailed: false };
        if (outcome.succeeded) {
          h.succeeded += 1;
          h.tail = 0;
        } else {
          h.failed += 1;
          h.tail += 1;
          if (delivery.probe) h.probeFailed = true;
        }
        health.set(delivery.subscriptionId, h);
      }
      const ids = [...health.keys()].sort();
      const openCircuits = new Set<string>();
      if (ids.length > 0) {
        // Locked in id order (concurrent batches take them in the same order), read as committed.
        const { rows: before } = await client.query<{ id: string; consecutive_failures: number; circuit_state: CircuitState; circuit_opens: number }>(
          `SELECT id, consecutive_failures, circuit_state, circuit_opens FROM webhook_subscriptions
            WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE`,
          [ids],
        );
        const after = before.map((row) => ({
          id: row.id,
          tally: health.get(row.id)!,
          ...afterAttempts(
            { consecutiveFailures: row.consecutive_failures, state: row.circuit_state, opens: row.circuit_opens },
            health.get(row.id)!,
            this.circuitPolicy,
          ),
        }));
        await client.query(
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
            after.map((c) => c.id),
            after.map((c) => c.consecutiveFailures),
            after.map((c) => c.tally.succeeded > 0),
            after.map((c) => c.tally.failed > 0),
            after.map((c) => c.state),
            after.map((c) => (c.openForMs === null ? null : c.openForMs / 1000)),
            after.map((c) => c.opens),
          ],
        );
        for (const c of after) if (c.state !== 'closed') openCircuits.add(c.id);
        circuitOpens.inc(after.filter((c) => c.openForMs !== null).length);
      }
      return { ids: recorded, openCircuits };
    });
  }

  /** Claimed deliveries never sent (a stop): back to the schedule as they were, their units released. */
  async unclaim(deliveries: readonly ClaimedDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    await this.transaction(async (client) => {
      const { rows } = await client.query<{ id: string }>(
        `UPDATE webhook_deliveries AS d
            SET status = 'pending', lease_token = NULL, lease_expires_at = NULL, reserved_period = NULL, updated_at = now()
           FROM unnest($1::uuid[], $2::uuid[]) AS c(id, token)
          WHERE d.id = c.id AND d.lease_token = c.token
          RETURNING d.id`,
        [deliveries.map((d) => d.id), deliveries.map((d) => d.leaseToken)],
      );
      const back = new Set(rows.map((row) => row.id));
      await settleUnits(
        client,
        deliveries.filter((d) => back.has(d.id)).map((d) => ({ reservation: d.reservation, commit: false })),
      );
      // A probe never sent: the circuit is open again, its probe due at once.
      const probes = deliveries.filter((d) => d.probe && back.has(d.id)).map((d) => d.subscriptionId);
      if (probes.length > 0) {
        await client.query(
          `UPDATE webhook_subscriptions SET circuit_state = 'open', circuit_open_until = now()
            WHERE id = ANY($1::uuid[]) AND circuit_state = 'half_open'`,
          [probes],
        );
      }
    });
  }

  /**
   * Attempts whose lease expired (their worker died or hung): counted as a failed attempt
   * (`interrupted`) and scheduled like one, their unit of allowance released.
   */
  async recoverExpired(): Promise<number> {
    const recovered = await this.transaction(async (client) => {
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
          await releaseUsage(client, { accountId: row.account_id, period: row.reserved_period, units: 1 });
        }
      }
      return rows.length;
    });
    interruptedAttempts.inc(recovered);
    return recovered;
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
      const inForce = await planInForce(this.pool, accountId);
      if (!inForce) continue;
      const usage = await getUsage(this.pool, accountId);
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

  /**
   * Make maintenance decided (SPEC Emission rule 7): deliveries waiting for an unknown make are
   * released when the listed spelling now resolves — through an alias or a canonical name, case and
   * spacing aside — to the make the subscription filters on, and dropped when it resolves to another
   * make or is confirmed as no make (an exclusion). The rest keep waiting. Returns what was decided.
   */
  async resolveMakeWaits(): Promise<{ released: number; dropped: number }> {
    return this.transaction(async (client) => {
      const { rows } = await client.query<{ released: number; dropped: number }>(
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
      return rows[0];
    });
  }

  /** For tests and readiness: deliveries due now. */
  async dueCount(client: Pool | PoolClient = this.pool): Promise<number> {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending' AND waiting_reason IS NULL AND next_attempt_at <= now()`,
    );
    return rows[0].n;
  }
}

/**
 * The units held by attempts: committed (success) or released, summed per account and period and
 * taken in a fixed order, so concurrent batches take the ledger rows in the same order.
 */
async function settleUnits(client: PoolClient, held: readonly { reservation: Reservation | null; commit: boolean }[]): Promise<void> {
  const units = new Map<string, { reservation: Reservation; commit: number; release: number }>();
  for (const { reservation, commit } of held) {
    if (!reservation) continue;
    const key = `${reservation.accountId}|${reservation.period}`;
    const entry = units.get(key) ?? { reservation, commit: 0, release: 0 };
    if (commit) entry.commit += 1;
    else entry.release += 1;
    units.set(key, entry);
  }
  for (const [, { reservation, commit, release }] of [...units].sort(([a], [b]) => a.localeCompare(b))) {
    if (commit > 0) await commitUsage(client, { ...reservation, units: commit });
    if (release > 0) await releaseUsage(client, { ...reservation, units: release });
  }
}
