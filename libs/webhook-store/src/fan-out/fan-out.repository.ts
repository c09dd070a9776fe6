import { Injectable } from '@nestjs/common';
import { PoolClient } from 'pg';
import { DueDeliveryRow } from '../dispatch/dispatch.repository';

/**
 * Fan-out (docs/architecture.md, "Events: from observation to webhook"), from the events table —
 * the outbox is the truth, RabbitMQ only wakes us: a batch of events not fanned out yet (rows other
 * workers hold are skipped) is matched against the enabled subscriptions, one delivery per (event,
 * subscription) is inserted — idempotent on the pair — and the events are marked, all in one
 * statement. A worker with room takes new deliveries leased at once (`FanOutLease`), in the order a
 * claim would have taken them.
 *
 * A subscription matches when it selected the event's type, its activation boundary is at or
 * before the event's observation time (both from the database clock), and every filter it has
 * holds (filters combine with AND): `auction_id` exactly, `make` and `source` case-insensitively,
 * on the event's routing context — a bid event's is its parent auction's. An event whose make is
 * not known yet (a listed spelling no alias resolves) goes to subscriptions with a `make` filter as
 * a delivery that waits (`waiting_reason: "make"`, pending, never dropped) until make maintenance
 * decides; subscriptions without one do not wait. The captured envelope text is the body of every
 * attempt.
 */
/**
 * What a worker can send at once, so the fan-out leases new deliveries to it in the same statement
 * (no claim of their own): up to `prefetch` less what it holds per endpoint, `accountShare` less
 * what it holds per account, `total` in all — only for an endpoint whose circuit is closed, whose
 * last attempt succeeded (not `failing` here either) and that has no due delivery waiting its
 * turn in the table; each leased delivery holds a unit of `period`.
 */
export interface FanOutLease {
  seconds: number;
  period: string;
  total: number;
  prefetch: number;
  accountShare: number;
  heldEndpoints: readonly (readonly [string, number])[];
  heldAccounts: readonly (readonly [string, number])[];
  failing: readonly string[];
}

/** What one fan-out batch did: events marked (and their `seq`s), deliveries created, and those leased to the caller. */
export interface FanOutResult {
  events: number;
  marked: string[];
  deliveries: number;
  leased: DueDeliveryRow[];
}

@Injectable()
export class FanOutRepository {
  /** One batch, in the caller's transaction (commit it without waiting for the WAL flush: lost in a crash, it is done again). */
  async fanOutBatch(tx: PoolClient, batchSize: number, lease: FanOutLease | null = null): Promise<FanOutResult> {
    const { rows } = await tx.query<{ events: number; deliveries: number; marked: string[] | null } & Partial<DueDeliveryRow> & { seq: string | null }>({
      name: 'delivery-fan-out',
      text: `WITH batch AS (
           -- The batch's rows as read here, so that nothing joins back to \`events\` by seq: such a join
           -- was planned as a hash over the whole table (every event ever kept) at every batch.
           SELECT seq, id, type, payload, created_at, auction_id, make, listed_make, source
             FROM events WHERE fanned_out_at IS NULL ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED
         ), matched AS MATERIALIZED (
           SELECT s.id AS subscription_id, s.account_id, e.id AS event_id, e.type, e.payload::text AS payload, e.seq,
                  CASE WHEN s.filters ? 'make' AND e.make IS NULL THEN 'make' END AS waiting_reason,
                  $2::boolean AND s.circuit_state = 'closed' AND s.consecutive_failures = 0 AND NOT (s.id = ANY($9::uuid[]))
                    AND NOT (s.filters ? 'make' AND e.make IS NULL) AS could_lease
             FROM batch e
             JOIN webhook_subscriptions s
               ON s.enabled AND e.type = ANY (s.event_types) AND s.active_since <= e.created_at
              AND (NOT (s.filters ? 'auction_id') OR s.filters ->> 'auction_id' = e.auction_id::text)
              AND (NOT (s.filters ? 'make') OR lower(s.filters ->> 'make') = lower(e.make)
                   OR (e.make IS NULL AND e.listed_make IS NOT NULL))
              AND (NOT (s.filters ? 'source') OR lower(s.filters ->> 'source') = lower(e.source))
         ), backlog AS MATERIALIZED (
           -- Once per endpoint the batch could lease to (not once per pair): does it have a due
           -- delivery waiting its turn? A scalar subquery, not NOT EXISTS: that would be planned as an
           -- anti-join over every due delivery (tens of thousands behind a dead endpoint) instead of
           -- one probe per endpoint in the order of webhook_deliveries_fair_idx.
           SELECT m.subscription_id,
                  (SELECT d.id FROM webhook_deliveries d
                    WHERE d.subscription_id = m.subscription_id AND d.status = 'pending' AND d.waiting_reason IS NULL AND d.next_attempt_at <= now()
                    ORDER BY d.attempts > 0, d.next_attempt_at LIMIT 1) IS NULL AS clear
             FROM (SELECT DISTINCT subscription_id FROM matched WHERE could_lease) m
         ), pairs AS (
           SELECT m.subscription_id, m.account_id, m.event_id, m.type, m.payload, m.seq, m.waiting_reason,
                  m.could_lease AND coalesce(b.clear, false) AS leasable
             FROM matched m LEFT JOIN backlog b ON b.subscription_id = m.subscription_id
         ), endpoint_turns AS (
           SELECT p.*, p.leasable AND row_number() OVER (PARTITION BY p.leasable, p.subscription_id ORDER BY p.seq) <= $4::int - coalesce(h.n, 0) AS within_endpoint
             FROM pairs p
             LEFT JOIN unnest($6::uuid[], $7::int[]) AS h(id, n) ON h.id = p.subscription_id
         ), account_turns AS (
           SELECT t.*, t.within_endpoint AND row_number() OVER (PARTITION BY t.within_endpoint, t.account_id ORDER BY t.seq, t.subscription_id)
                         <= $5::int - coalesce(a.n, 0) AS within_account
             FROM endpoint_turns t
             LEFT JOIN unnest($10::uuid[], $11::int[]) AS a(id, n) ON a.id = t.account_id
         ), decided AS (
           SELECT t.*, t.within_account AND row_number() OVER (PARTITION BY t.within_account ORDER BY t.seq, t.subscription_id) <= $3::int AS lease
             FROM account_turns t
         ), inserted AS (
           INSERT INTO webhook_deliveries (subscription_id, account_id, event_id, event_type, payload, next_attempt_at, waiting_reason,
                                           status, lease_token, lease_expires_at, reserved_period)
           SELECT subscription_id, account_id, event_id, type, payload, now(), waiting_reason,
                  CASE WHEN lease THEN 'sending' ELSE 'pending' END,
                  CASE WHEN lease THEN gen_random_uuid() END,
                  CASE WHEN lease THEN now() + make_interval(secs => $8::float8) END,
                  CASE WHEN lease THEN $12::text END
             FROM decided
            ORDER BY seq, subscription_id
           ON CONFLICT (event_id, subscription_id) DO NOTHING
           RETURNING id, status, lease_token, subscription_id, account_id, event_id, event_type, payload
         ), marked AS (
           -- By key (the primary key's index, one probe per seq), not a join planned over the table.
           UPDATE events SET fanned_out_at = now() WHERE seq = ANY (ARRAY(SELECT seq FROM batch)) RETURNING events.seq
         ), leased AS (
           SELECT i.id, i.lease_token, i.subscription_id, i.account_id, i.event_id, i.event_type, i.payload, s.url,
                  s.secret_ciphertext, s.secret_key_id,
                  CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret_ciphertext END AS previous_ciphertext,
                  CASE WHEN s.previous_secret_expires_at > now() THEN s.previous_secret_key_id END AS previous_key_id,
                  false AS probe, false AS failing, d.seq
             FROM inserted i
             JOIN webhook_subscriptions s ON s.id = i.subscription_id
             JOIN decided d ON d.event_id = i.event_id AND d.subscription_id = i.subscription_id
            WHERE i.status = 'sending'
         )
         -- The marked seqs once, on the first row only.
         SELECT c.events, c.deliveries, CASE WHEN row_number() OVER () = 1 THEN c.marked END AS marked, l.*
           FROM (SELECT (SELECT count(*)::int FROM marked) AS events, (SELECT count(*)::int FROM inserted) AS deliveries,
                        (SELECT coalesce(array_agg(seq::text), '{}') FROM marked) AS marked) AS c
           LEFT JOIN leased l ON true`,
      values: [
        batchSize,
        lease !== null,
        lease?.total ?? 0,
        lease?.prefetch ?? 0,
        lease?.accountShare ?? 0,
        lease?.heldEndpoints.map(([id]) => id) ?? [],
        lease?.heldEndpoints.map(([, n]) => n) ?? [],
        lease?.seconds ?? 0,
        lease?.failing ?? [],
        lease?.heldAccounts.map(([id]) => id) ?? [],
        lease?.heldAccounts.map(([, n]) => n) ?? [],
        lease?.period ?? null,
      ],
    });
    const leased = rows
      .filter((row) => row.id !== null && row.id !== undefined)
      .sort((a, b) => Number(a.seq) - Number(b.seq) || a.subscription_id!.localeCompare(b.subscription_id!))
      .map(({ events: _events, deliveries: _deliveries, marked: _marked, seq: _seq, ...row }) => row as DueDeliveryRow);
    return { events: rows[0].events, marked: rows[0].marked ?? [], deliveries: rows[0].deliveries, leased };
  }
}
