import { rows, type Sql } from '@cars/persistence';
import { billingPeriod } from './billing-period';

/** Units charged on one UTC day, split like the ledger: API requests and the rest (deliveries). */
export interface DailyUsage {
  /** YYYY-MM-DD (UTC). */
  date: string;
  requests: number;
  deliveries: number;
}

const DAY_MS = 86_400_000;

/**
 * Every day of the billing period containing `now`, from its first day through `now`'s, with the
 * units charged that day (zeros for days without any). Read from `usage_daily`, which a trigger
 * on `usage_ledger` keeps in the statement that charges (migration UsageDaily).
 */
export async function getDailyUsage(db: Sql, accountId: string, now: Date = new Date()): Promise<DailyUsage[]> {
  const period = billingPeriod(now);
  const found = await rows<{ day: string; requests: number; deliveries: number }>(
    db,
    `SELECT to_char(day, 'YYYY-MM-DD') AS day, requests, deliveries FROM usage_daily
      WHERE account_id = $1 AND day >= $2::date AND day < $3::date`,
    [accountId, period.key, period.end.toISOString().slice(0, 10)],
  );
  const byDay = new Map(found.map((r) => [r.day, r]));
  const days: DailyUsage[] = [];
  for (let t = period.start.getTime(); t <= now.getTime() && t < period.end.getTime(); t += DAY_MS) {
    const date = new Date(t).toISOString().slice(0, 10);
    const row = byDay.get(date);
    days.push({ date, requests: row?.requests ?? 0, deliveries: row?.deliveries ?? 0 });
  }
  return days;
}
