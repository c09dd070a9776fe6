import { Client } from 'pg';

export interface BenchScope {
  make: string;
  model?: string;
  year_min?: number;
  year_max?: number;
}

/** The API answer shape (docs/api/stats.md). */
export interface StatsAnswer {
  currency: string;
  total_sales: number;
  average_price: number;
  median_price: number;
  lowest_price: number;
  highest_price: number;
  sell_through_rate: number;
  price_trend: { date: string; avg_price: number; volume: number }[];
}

/**
 * The straightforward SQL one would write without rollups: one aggregate pass over the scope's
 * `auctions` rows (percentile_cont for the median) plus a GROUP BY month for the trend, with the
 * rounding of docs/api/stats.md. Both the correctness reference and the baseline timing.
 */
export function rawStatsQuery(scope: BenchScope, firstMonth: string, lastMonth: string): { text: string; values: unknown[] } {
  const values: unknown[] = [scope.make, firstMonth, lastMonth];
  const filter = ['ocd_make_name = $1'];
  if (scope.model !== undefined) {
    values.push(scope.model);
    filter.push(`ocd_model_name = $${values.length}`);
  }
  if (scope.year_min !== undefined) {
    values.push(scope.year_min);
    filter.push(`year >= $${values.length}`);
  }
  if (scope.year_max !== undefined) {
    values.push(scope.year_max);
    filter.push(`year <= $${values.length}`);
  }
  const where = filter.join(' AND ');
  const sale = `auction_status = 'sold' AND NOT is_live AND price_usd IS NOT NULL`;
  const completed = `NOT is_live AND auction_status IN ('sold', 'reserve not met', 'bid to')`;
  return {
    text: `
      SELECT count(*) FILTER (WHERE ${sale}) AS total_sales,
             coalesce(round(avg(price_usd) FILTER (WHERE ${sale}), 2), 0)::text AS average_price,
             coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY price_usd) FILTER (WHERE ${sale}), 0) AS median_price,
             coalesce(min(price_usd) FILTER (WHERE ${sale}), 0)::text AS lowest_price,
             coalesce(max(price_usd) FILTER (WHERE ${sale}), 0)::text AS highest_price,
             coalesce(round((count(*) FILTER (WHERE ${completed} AND auction_status = 'sold'))::numeric
                            / nullif(count(*) FILTER (WHERE ${completed}), 0), 4), 0)::text AS sell_through_rate,
             (SELECT json_agg(json_build_object('date', to_char(m.month, 'YYYY-MM'),
                                                'avg_price', coalesce(t.avg_price, 0)::text,
                                                'volume', coalesce(t.volume, 0)) ORDER BY m.month)
              FROM generate_series($2::date, $3::date, interval '1 month') AS m (month)
              LEFT JOIN (SELECT date_trunc('month', auction_end_date) AS month, round(avg(price_usd), 2) AS avg_price,
                                count(*) AS volume
                         FROM auctions
                         WHERE ${where} AND ${sale} AND auction_end_date >= $2::date
                           AND auction_end_date < $3::date + interval '1 month'
                         GROUP BY 1) t ON t.month = m.month) AS price_trend
      FROM auctions
      WHERE ${where}`,
    values,
  };
}

export async function rawStats(client: Client, scope: BenchScope, firstMonth: string, lastMonth: string): Promise<StatsAnswer> {
  const result = await client.query(rawStatsQuery(scope, firstMonth, lastMonth));
  const row = result.rows[0] as Record<string, unknown> & { price_trend: { date: string; avg_price: string; volume: number }[] };
  return {
    currency: 'USD',
    total_sales: Number(row.total_sales),
    average_price: Number(row.average_price),
    median_price: Number(row.median_price),
    lowest_price: Number(row.lowest_price),
    highest_price: Number(row.highest_price),
    sell_through_rate: Number(row.sell_through_rate),
    price_trend: row.price_trend.map((p) => ({ date: p.date, avg_price: Number(p.avg_price), volume: Number(p.volume) })),
  };
}
