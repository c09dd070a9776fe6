import { Inject, Injectable } from '@nestjs/common';
import { PG_POOL, withTransaction } from '@cars/persistence';
import { Pool } from 'pg';

/**
 * Fan-out (DESIGN §6.4), from the events table — the outbox is the truth, RabbitMQ only wakes us:
 * a batch of events not fanned out yet (rows other workers hold are skipped) is matched against
 * the enabled subscriptions, one delivery per (event, subscription) is inserted — idempotent on
 * the pair — and the events are marked, all in one transaction (committed without waiting for the
 * WAL flush: lost in a database crash, it is simply done again).
 *
 * A subscription matches when it selected the event's type, its activation boundary is at or
 * before the event's observation time (both from the database clock), and every filter it has
 * holds (SPEC "Filters", AND): `auction_id` exactly, `make` and `source` case-insensitively, on the
 * event's routing context — a bid event's is its parent auction's. An event whose make is not
 * known yet (a listed spelling no alias resolves) goes to subscriptions with a `make` filter as a
 * delivery that waits (`waiting_reason: "make"`, SPEC Emission rule 7) until make maintenance
 * decides; subscriptions without one do not wait. The captured envelope text is the body of every
 * attempt.
 */
@Injectable()
export class FanOutRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  async fanOutBatch(batchSize: number): Promise<{ events: number; deliveries: number }> {
    return withTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ events: number; deliveries: number }>(
        `WITH batch AS (
           SELECT seq FROM events WHERE fanned_out_at IS NULL ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED
         ), inserted AS (
           INSERT INTO webhook_deliveries (subscription_id, account_id, event_id, event_type, payload, next_attempt_at, waiting_reason)
           SELECT s.id, s.account_id, e.id, e.type, e.payload::text, now(),
                  CASE WHEN s.filters ? 'make' AND e.make IS NULL THEN 'make' END
             FROM batch JOIN events e ON e.seq = batch.seq
             JOIN webhook_subscriptions s
               ON s.enabled AND e.type = ANY (s.event_types) AND s.active_since <= e.created_at
              AND (NOT (s.filters ? 'auction_id') OR s.filters ->> 'auction_id' = e.auction_id::text)
              AND (NOT (s.filters ? 'make') OR lower(s.filters ->> 'make') = lower(e.make)
                   OR (e.make IS NULL AND e.listed_make IS NOT NULL))
              AND (NOT (s.filters ? 'source') OR lower(s.filters ->> 'source') = lower(e.source))
            ORDER BY e.seq, s.id
           ON CONFLICT (event_id, subscription_id) DO NOTHING
           RETURNING 1
         ), marked AS (
           UPDATE events SET fanned_out_at = now() FROM batch WHERE events.seq = batch.seq RETURNING 1
         )
         SELECT (SELECT count(*)::int FROM marked) AS events, (SELECT count(*)::int FROM inserted) AS deliveries`,
        [batchSize],
      );
      return rows[0];
    }, { asyncCommit: true });
  }
}
