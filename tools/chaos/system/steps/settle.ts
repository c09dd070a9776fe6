import { sleep } from '../../common/infra';
import { Drill } from './prepare';

/**
 * Settled: every auction in its final state, every event relayed and fanned out, every delivery
 * done — or no progress for a minute (10 minutes at most); then a moment for the last receipts and
 * ledger settlements.
 */
export async function waitForSettled(drill: Drill, auctions: number): Promise<void> {
  const like = `${drill.tag}-%`;
  let stalledSince = Date.now();
  let lastProgress = '';
  const hardStop = Date.now() + 10 * 60_000;
  while (Date.now() - stalledSince < 60_000 && Date.now() < hardStop) {
    try {
      const { rows } = await drill.pool.query(
        `SELECT (SELECT count(*)::int FROM auctions WHERE source_auction_id LIKE $1 AND source_status = 'sold' AND bid_count = 2) AS final,
                (SELECT count(*)::int FROM events WHERE published_at IS NULL OR fanned_out_at IS NULL) AS unrelayed,
                (SELECT count(*)::int FROM webhook_deliveries WHERE status IN ('pending', 'sending')) AS open,
                (SELECT count(*)::int FROM webhook_deliveries) AS deliveries`,
        [like],
      );
      const progress = JSON.stringify({ ...rows[0], arrivals: drill.arrivals.length });
      if (progress !== lastProgress) {
        lastProgress = progress;
        stalledSince = Date.now();
      }
      if (rows[0].final === auctions && rows[0].unrelayed === 0 && rows[0].open === 0) break;
    } catch {
      // PostgreSQL still coming back
    }
    await sleep(1000);
  }
  await sleep(2000);
}
