import { Client } from 'pg';
import { FX_CURRENCIES, FX_TABLE } from '@cars/persistence';

/**
 * The benchmark's synthetic auctions, generated inside PostgreSQL with generate_series (fast,
 * deterministic for a seed). The shape is what the stats read, with a realistic skew:
 * - 120 makes with Zipf-like shares (exponent 0.82): the largest has ~12% of all rows;
 * - 40 models per make, Zipf within the make (the top model ~23% of its make);
 * - model years over a 8–29 year production span per model, 1950–2024; 1% without a year;
 *   2% without a canonical model;
 * - prices log-normal around a per-model level ($8k–$320k), rounded to $100 (ties, like real
 *   hammer prices);
 * - statuses: 62% sold, 14% reserve not met, 12% bid to, 3% withdrawn, 2% canceled, 7% result
 *   unavailable; 1.5% live (active, ending within a week);
 * - the seven platforms of `libs/persistence/src/reference/sources.ts`, Bring a Trailer the
 *   largest; collectingcars and carandclassic price in GBP, EUR, AUD or USD, converted to
 *   `price_usd` with the shipped monthly FX table at the month of the end date;
 * - end dates from 2018-01-01 to today, denser towards today (volume grows over the years).
 */
export const MAKE_NAMES = [
  'Porsche', 'Chevrolet', 'Ford', 'Mercedes-Benz', 'BMW', 'Jaguar', 'Ferrari', 'Toyota', 'Land Rover', 'Volkswagen',
  'Dodge', 'Alfa Romeo', 'Aston Martin', 'Lamborghini', 'Nissan', 'Pontiac', 'Austin-Healey', 'Triumph', 'MG', 'Lotus',
  'Jeep', 'Cadillac', 'Buick', 'Oldsmobile', 'Plymouth', 'Mazda', 'Honda', 'Audi', 'Lancia', 'Maserati',
];

export interface DatasetOptions {
  auctions: number;
  seed: number;
}

function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** Inserts sources, makes, models and `auctions` rows (rollup triggers run as for any ingest). */
export async function generateDataset(client: Client, options: DatasetOptions): Promise<void> {
  const seed = ((options.seed % 1000) + 1000) % 1000 / 1000;
  await client.query(`SELECT setseed(${seed})`);
  await client.query(`
    INSERT INTO sources (id, name, live, timezone) VALUES
      ('bringatrailer', 'Bring a Trailer', true, 'America/Los_Angeles'),
      ('carsandbids', 'Cars & Bids', true, 'America/Los_Angeles'),
      ('pcarmarket', 'PCARMARKET', false, 'America/Los_Angeles'),
      ('hagerty', 'Hagerty Marketplace', false, 'America/New_York'),
      ('hemmings', 'Hemmings', false, 'America/New_York'),
      ('collectingcars', 'Collecting Cars', false, 'Europe/London'),
      ('carandclassic', 'Car & Classic', false, 'Europe/London')
    ON CONFLICT (id) DO NOTHING`);

  const names = Array.from({ length: 120 }, (_, i) => MAKE_NAMES[i] ?? `Make ${String(i + 1).padStart(3, '0')}`);
  await client.query(
    `INSERT INTO makes (name) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING`,
    [names],
  );
  await client.query(`
    INSERT INTO models (make_id, name)
    SELECT m.id, 'Model ' || lpad(j::text, 2, '0') FROM makes m, generate_series(1, 40) j
    ON CONFLICT DO NOTHING`);

  const fxRows = Object.entries(FX_TABLE).flatMap(([month, rates]) =>
    FX_CURRENCIES.map((currency) => `(${sqlString(month)}, ${sqlString(currency)}, ${rates[currency]})`),
  );
  await client.query(`CREATE TEMP TABLE bench_fx (month text, currency text, rate numeric, PRIMARY KEY (month, currency))`);
  await client.query(`INSERT INTO bench_fx VALUES ${fxRows.join(', ')}`);

  await client.query(`
    CREATE TEMP TABLE bench_makes AS
    SELECT m.id AS make_id, m.name AS make, array_position($1::text[], m.name) AS rank FROM makes m
    WHERE m.name = ANY($1::text[])`, [names]);
  await client.query(`
    CREATE TEMP TABLE bench_models AS
    SELECT make_id, model, rank, span, 1950 + floor(r_first * (2024 - 1950 - span))::int AS first_year, level
    FROM (
      SELECT mo.make_id, mo.name AS model, row_number() OVER (PARTITION BY mo.make_id ORDER BY mo.name) AS rank,
             8 + floor(random() * 22)::int AS span, random() AS r_first, exp(ln(8000) + random() * ln(40)) AS level
      FROM models mo JOIN bench_makes bm ON bm.make_id = mo.make_id
    ) x`);
  await client.query(`CREATE INDEX ON bench_models (make_id, rank)`);
  await client.query(`
    CREATE TEMP TABLE bench_cdf AS
    SELECT (SELECT array_agg(c ORDER BY rank) FILTER (WHERE rank < 120) FROM (
              SELECT rank, sum(1 / power(rank, 0.82)) OVER (ORDER BY rank) / sum(1 / power(rank, 0.82)) OVER () AS c
              FROM bench_makes) x) AS makes,
           (SELECT array_agg(c ORDER BY rank) FILTER (WHERE rank < 40) FROM (
              SELECT rank, sum(1.0 / rank) OVER (ORDER BY rank) / sum(1.0 / rank) OVER () AS c
              FROM generate_series(1, 40) rank) y) AS models`);

  await client.query(`
    INSERT INTO auctions (source, source_auction_id, title, source_status, auction_status, is_live, price, currency,
                          price_usd, auction_end_date, year, ocd_make_name, ocd_model_name, listing_make, listing_model)
    SELECT g.src, 'bench-' || g.i, g.year || ' ' || g.make || ' ' || g.model,
           CASE WHEN g.live THEN 'active' ELSE g.status END,
           CASE WHEN g.live THEN NULL WHEN g.status = 'result unavailable' THEN 'unknown' ELSE g.status END,
           g.live, g.price, g.currency, round(g.price * fx.rate), g.end_date,
           CASE WHEN g.r_null_year < 0.01 THEN NULL ELSE g.year END,
           g.make, CASE WHEN g.r_null_model < 0.02 THEN NULL ELSE g.model END, g.make, g.model
    FROM (
      SELECT d.*, bm.make, bmo.model, bmo.first_year + floor(d.r_year * bmo.span)::int AS year,
             greatest(100, round(bmo.level * exp(0.45 * sqrt(-2 * ln(d.u1)) * cos(2 * pi() * d.u2)) /
                                 (CASE d.currency WHEN 'USD' THEN 1 ELSE 1.2 END) / 100) * 100) AS price,
             CASE WHEN d.live THEN current_date + floor(d.r_date * 7)::int
                  ELSE DATE '2018-01-01' + floor(sqrt(d.r_date) * (current_date - DATE '2018-01-01'))::int END AS end_date,
             CASE WHEN d.r_status < 0.62 THEN 'sold' WHEN d.r_status < 0.76 THEN 'reserve not met'
                  WHEN d.r_status < 0.88 THEN 'bid to' WHEN d.r_status < 0.91 THEN 'withdrawn'
                  WHEN d.r_status < 0.93 THEN 'canceled' ELSE 'result unavailable' END AS status
      FROM (
        SELECT r.*, width_bucket(r.r_make, cdf.makes) + 1 AS make_rank, width_bucket(r.r_model, cdf.models) + 1 AS model_rank,
               CASE WHEN r.src = 'collectingcars' THEN (ARRAY['GBP', 'GBP', 'GBP', 'EUR', 'USD', 'AUD'])[1 + floor(r.r_cur * 6)::int]
                    WHEN r.src = 'carandclassic' THEN (ARRAY['GBP', 'GBP', 'GBP', 'EUR'])[1 + floor(r.r_cur * 4)::int]
                    ELSE 'USD' END AS currency
        FROM (
          SELECT i, random() AS r_make, random() AS r_model, random() AS r_year, 1 - random() AS u1, random() AS u2,
                 random() AS r_date, random() AS r_status, random() AS r_null_year, random() AS r_null_model,
                 random() < 0.015 AS live, random() AS r_cur,
                 (ARRAY['bringatrailer', 'bringatrailer', 'bringatrailer', 'bringatrailer', 'bringatrailer', 'bringatrailer',
                        'bringatrailer', 'bringatrailer', 'bringatrailer', 'carsandbids', 'carsandbids', 'carsandbids',
                        'pcarmarket', 'pcarmarket', 'hagerty', 'hemmings', 'collectingcars', 'collectingcars',
                        'collectingcars', 'carandclassic'])[1 + floor(random() * 20)::int] AS src
          FROM generate_series(1, ${Math.floor(options.auctions)}) i
        ) r CROSS JOIN bench_cdf cdf
      ) d
      JOIN bench_makes bm ON bm.rank = d.make_rank
      JOIN bench_models bmo ON bmo.make_id = bm.make_id AND bmo.rank = d.model_rank
    ) g
    JOIN bench_fx fx ON fx.currency = g.currency
                    AND fx.month = least(greatest(to_char(g.end_date, 'YYYY-MM'), '${Object.keys(FX_TABLE)[0]}'),
                                         '${Object.keys(FX_TABLE).at(-1)}')`);
}
