import { Inject, Injectable } from '@nestjs/common';
import { PG_POOL } from '@cars/persistence';
import { Pool } from 'pg';

/**
 * The 30-day cleanup, one short statement per batch (no long locks): deliveries that ended, and
 * events no delivery needs any more. `bid_identities` stay: a bid seen again after cleanup is
 * recognised and never fires a second `bid.created`.
 */
@Injectable()
export class RetentionRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** Up to `batch` deliveries that ended (`succeeded`, `failed`, `canceled`) more than `days` ago. Returns how many went. */
  async deleteEndedDeliveries(days: number, batch: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM webhook_deliveries WHERE id IN (
           SELECT id FROM webhook_deliveries
            WHERE status IN ('succeeded', 'failed', 'canceled') AND updated_at < now() - make_interval(days => $1)
            LIMIT $2)`,
      [days, batch],
    );
    return rowCount ?? 0;
  }

  /** Up to `batch` events older than `days`, published and fanned out, with no delivery left that needs their payload. */
  async deleteSpentEvents(days: number, batch: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM events WHERE seq IN (
           SELECT e.seq FROM events e
            WHERE e.created_at < now() - make_interval(days => $1)
              AND e.published_at IS NOT NULL AND e.fanned_out_at IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
            ORDER BY e.seq LIMIT $2)`,
      [days, batch],
    );
    return rowCount ?? 0;
  }
}
