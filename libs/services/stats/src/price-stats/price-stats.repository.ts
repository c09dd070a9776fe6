import { Injectable } from '@nestjs/common';
import type { QueryConfig } from 'pg';
import { ReadPool } from '@cars/persistence';

/** What a stats request covers: an exact canonical make, optionally a model and model-year bounds. */
export interface PriceStatsScope {
  make: string;
  model?: string;
  yearMin?: number;
  yearMax?: number;
}

/** Raw figures of one scope, all read in one statement (one snapshot). */
export interface PriceStatsFigures {
  /** Completed auctions (sold, reserve not met, bid to; not live). */
  completed: bigint;
  /** Sold auctions, with or without a known price. */
  sold: bigint;
  /** Sold auctions with a USD price: the population of every price figure. */
  sales: bigint;
  salesSumUsd: bigint;
  lowestUsd: number | null;
  highestUsd: number | null;
  /** The middle price (odd count) or the two middle prices (even count) in ascending order. */
  middleUsd: number[];
  /** Months (first day, YYYY-MM-DD) that have sales, with their count and USD sum. */
  months: { month: string; sales: bigint; sumUsd: bigint }[];
}

export interface PriceStatsResult {
  /**
   * The canonical make whose name equals the requested one (or else differs only in letter case),
   * and the same for the model among that make's models; null when nothing matches. The figures
   * are those of the names exactly as requested, so they are only meaningful when these match.
   */
  names: { make: string | null; model: string | null };
  figures: PriceStatsFigures;
}

interface Row {
  resolved_make: string | null;
  resolved_model: string | null;
  completed: string;
  sold: string;
  sales: string;
  sum_usd: string;
  lowest: string | null;
  highest: string | null;
  middle: string[] | null;
  months: { month: string; sales: string; sum_usd: string }[] | null;
}

/** Verbatim predicate of the auctions_stats_*_price_idx partial indexes (migration StatsRollups). */
const PRICED_SALE = `auction_status = 'sold' AND NOT is_live AND price_usd IS NOT NULL`;

/** Bump when the statement text changes: prepared statements are cached per connection by name. */
const STATEMENT_VERSION = 2;

const MIN_BIGINT = '(-9223372036854775808)::bigint';

/**
 * The statement for one filter shape (which optional filters are present). Parameters: $1 make,
 * $2 first and $3 last trend month, then model, year_min, year_max as present.
 *
 * Totals and the trend come from the rollups that triggers keep in step with `auctions`; lowest,
 * highest and the median come from an index-only scan of a covering partial index of priced sales,
 * in price order: the median is the row at offset (n-1)/2 (one or two rows), with n from the rollup.
 * Without a year filter, the price-bucket counts give the bucket holding that row and how many
 * sales lie below it, so the scan starts at the bucket (a few hundred entries, not n/2); with a
 * year filter it starts at the make's (or model's) cheapest sale and filters on the year.
 */
function buildStatement(shape: { model: boolean; yearMin: boolean; yearMax: boolean }): { name: string; text: string } {
  let next = 4;
  const rollup = ['make = $1'];
  const sales = ['ocd_make_name = $1', PRICED_SALE];
  let modelParam = 'NULL::text';
  if (shape.model) {
    modelParam = `$${next}::text`;
    rollup.push(`model = $${next}`);
    sales.push(`ocd_model_name = $${next}`);
    next += 1;
  }
  if (shape.yearMin) {
    rollup.push(`year >= $${next}::smallint`);
    sales.push(`year >= $${next}::smallint`);
    next += 1;
  }
  if (shape.yearMax) {
    rollup.push(`year <= $${next}::smallint`);
    sales.push(`year <= $${next}::smallint`);
    next += 1;
  }
  const inRollup = rollup.join(' AND ');
  const inSales = sales.join(' AND ');
  const buckets = shape.yearMin || shape.yearMax
    ? null
    : shape.model
      ? { table: 'stats_price_buckets_by_model', where: `make = $1 AND model = ${modelParam}` }
      : { table: 'stats_price_buckets_by_make', where: 'make = $1' };
  // The bucket holding the lower middle sale (0-based rank (n-1)/2) and the count below it.
  const start = buckets
    ? `,
    start AS (
      SELECT stats_price_bucket_floor(b.bucket) AS floor, b.below
      FROM (SELECT bucket, sum(sales) OVER w - sales AS below, sum(sales) OVER w AS upto
            FROM ${buckets.table} WHERE ${buckets.where}
            WINDOW w AS (ORDER BY bucket)) b, totals t
      WHERE b.upto > (t.sales - 1) / 2 AND b.below <= (t.sales - 1) / 2
    )`
    : '';
  const middleFrom = buckets ? ` AND price_usd >= coalesce((SELECT floor FROM start), ${MIN_BIGINT})` : '';
  const middleOffset = buckets ? '(t.sales - 1) / 2 - coalesce((SELECT below FROM start), 0)' : '(t.sales - 1) / 2';
  const text = `
    WITH names AS (
      SELECT mk.name AS make,
             (SELECT mo.name FROM models mo
              WHERE mo.make_id = mk.id AND lower(mo.name) = lower(${modelParam})
              ORDER BY (mo.name = ${modelParam}) DESC, mo.name LIMIT 1) AS model
      FROM makes mk
      WHERE lower(mk.name) = lower($1::text)
      ORDER BY (mk.name = $1::text) DESC, mk.name
      LIMIT 1
    ),
    totals AS (
      SELECT coalesce(sum(completed), 0)::bigint AS completed,
             coalesce(sum(sold), 0)::bigint AS sold,
             coalesce(sum(priced_sales), 0)::bigint AS sales,
             coalesce(sum(priced_sum_usd), 0)::bigint AS sum_usd
      FROM stats_sales_totals
      WHERE ${inRollup}
    )${start}
    SELECT (SELECT make FROM names) AS resolved_make,
           (SELECT model FROM names) AS resolved_model,
           t.completed::text, t.sold::text, t.sales::text, t.sum_usd::text,
           (SELECT price_usd FROM auctions WHERE ${inSales} ORDER BY price_usd ASC LIMIT 1)::text AS lowest,
           (SELECT price_usd FROM auctions WHERE ${inSales} ORDER BY price_usd DESC LIMIT 1)::text AS highest,
           (SELECT array_agg(m.price_usd::text ORDER BY m.price_usd)
            FROM (SELECT price_usd FROM auctions WHERE ${inSales}${middleFrom}
                  ORDER BY price_usd OFFSET greatest(${middleOffset}, 0) LIMIT 2 - t.sales % 2) m) AS middle,
           (SELECT json_agg(json_build_object('month', s.month, 'sales', s.sales::text, 'sum_usd', s.sum_usd::text)
                            ORDER BY s.month)
            FROM (SELECT month::text AS month, sum(priced_sales) AS sales, sum(priced_sum_usd) AS sum_usd
                  FROM stats_sales_monthly
                  WHERE ${inRollup} AND month BETWEEN $2::date AND $3::date
                  GROUP BY month) s) AS months
    FROM totals t`;
  const name = `stats_prices_v${STATEMENT_VERSION}_${Number(shape.model)}${Number(shape.yearMin)}${Number(shape.yearMax)}`;
  return { name, text };
}

/** Reads pricing statistics. */
@Injectable()
export class PriceStatsRepository {
  private readonly statements = new Map<string, { name: string; text: string }>();

  constructor(private readonly reads: ReadPool) {}

  /**
   * Names and figures of `scope` in one statement (one snapshot, one round trip); the trend covers
   * months from `firstMonth` to `lastMonth` (YYYY-MM-01). A named prepared statement per filter
   * shape: each pooled connection plans it once, not on every request.
   */
  async priceStats(scope: PriceStatsScope, firstMonth: string, lastMonth: string): Promise<PriceStatsResult> {
    const shape = { model: scope.model !== undefined, yearMin: scope.yearMin !== undefined, yearMax: scope.yearMax !== undefined };
    const key = `${shape.model}${shape.yearMin}${shape.yearMax}`;
    let statement = this.statements.get(key);
    if (!statement) {
      statement = buildStatement(shape);
      this.statements.set(key, statement);
    }
    const values: unknown[] = [scope.make, firstMonth, lastMonth];
    if (scope.model !== undefined) values.push(scope.model);
    if (scope.yearMin !== undefined) values.push(scope.yearMin);
    if (scope.yearMax !== undefined) values.push(scope.yearMax);

    const query: QueryConfig = { name: statement.name, text: statement.text, values };
    const row = (await this.reads.pool.query<Row>(query)).rows[0];
    return {
      names: { make: row.resolved_make, model: row.resolved_model },
      figures: {
        completed: BigInt(row.completed),
        sold: BigInt(row.sold),
        sales: BigInt(row.sales),
        salesSumUsd: BigInt(row.sum_usd),
        lowestUsd: row.lowest === null ? null : Number(row.lowest),
        highestUsd: row.highest === null ? null : Number(row.highest),
        middleUsd: (row.middle ?? []).map(Number),
        months: (row.months ?? []).map((m) => ({ month: m.month, sales: BigInt(m.sales), sumUsd: BigInt(m.sum_usd) })),
      },
    };
  }
}
