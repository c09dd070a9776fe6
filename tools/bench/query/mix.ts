import { DataSource } from 'typeorm';
import { BenchRequest } from './load-generator';

/**
 * The fixed request mix, with values taken from the loaded data so every class means what it
 * says (the most popular make, a keyword matching about a third of the rows…). Each class has a
 * few variants; the mix interleaves classes round-robin.
 */
export interface MixClass {
  name: string;
  description: string;
  paths: string[];
}

const SELECTIVE_CANDIDATES = ['gullwing', 'mangusta', 'countach', 'testarossa', 'hemi', 'shelby', 'concours', 'matching numbers'];
const BROAD_CANDIDATES = ['service records', 'no reserve', 'tool kit', 'manual', 'spare key', 'automatic', 'leather'];

const q = (params: Record<string, string | number>) =>
  Object.entries(params)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join('&');

async function keywordShares(db: DataSource, candidates: string[]): Promise<{ keyword: string; share: number }[]> {
  const columns = candidates
    .map((k, i) => `avg((title ILIKE $${i + 1} OR description ILIKE $${i + 1})::int)::float8 AS k${i}`)
    .join(', ');
  const [row] = (await db.query(
    `SELECT ${columns} FROM auctions TABLESAMPLE SYSTEM (5) REPEATABLE (7) WHERE NOT is_live`,
    candidates.map((k) => `%${k}%`),
  )) as Record<string, number>[];
  return candidates.map((keyword, i) => ({ keyword, share: row[`k${i}`] ?? 0 }));
}

export async function buildMix(db: DataSource): Promise<{ classes: MixClass[]; notes: string[] }> {
  const notes: string[] = [];
  const makes = (await db.query(
    `SELECT ocd_make_name AS make, count(*)::int AS n FROM auctions WHERE NOT is_live AND ocd_make_name IS NOT NULL
      GROUP BY 1 ORDER BY 2 DESC LIMIT 3`,
  )) as { make: string; n: number }[];
  const [completed] = (await db.query(`SELECT count(*)::int AS n FROM auctions WHERE NOT is_live`)) as { n: number }[];
  notes.push(`make only: ${makes.map((m) => `${m.make} (${m.n} rows, ${((m.n / completed.n) * 100).toFixed(1)}%)`).join(', ')}`);

  const models = (await db.query(
    `SELECT ocd_make_name AS make, ocd_model_name AS model, count(*)::int AS n,
            percentile_disc(0.25) WITHIN GROUP (ORDER BY year) AS lo, percentile_disc(0.75) WITHIN GROUP (ORDER BY year) AS hi
       FROM auctions WHERE NOT is_live AND ocd_make_name = ANY($1) AND ocd_model_name IS NOT NULL AND year IS NOT NULL
      GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 3`,
    [makes.map((m) => m.make)],
  )) as { make: string; model: string; n: number; lo: number; hi: number }[];
  notes.push(`make+model+years: ${models.map((m) => `${m.make} ${m.model} ${m.lo}–${m.hi} (${m.n} rows of the model)`).join(', ')}`);

  const selective = (await keywordShares(db, SELECTIVE_CANDIDATES))
    .filter((k) => k.share >= 0.0001 && k.share <= 0.002)
    .sort((a, b) => a.share - b.share)
    .slice(0, 3);
  const broad = (await keywordShares(db, BROAD_CANDIDATES)).sort(
    (a, b) => Math.abs(a.share - 1 / 3) - Math.abs(b.share - 1 / 3),
  );
  notes.push(`selective keywords: ${selective.map((k) => `"${k.keyword}" (~${(k.share * 100).toFixed(2)}%)`).join(', ')}`);
  notes.push(`broad keyword: "${broad[0].keyword}" (~${(broad[0].share * 100).toFixed(1)}% of rows)`);

  const vins = (await db.query(
    `SELECT vin FROM auctions WHERE NOT is_live AND vin IS NOT NULL AND id IN (SELECT id FROM auctions ORDER BY id LIMIT 3 OFFSET 400000)
     UNION ALL SELECT vin FROM auctions WHERE NOT is_live AND vin IS NOT NULL AND id > 900000 LIMIT 2`,
  )) as { vin: string }[];

  const [live] = (await db.query(
    `SELECT min(auction_end_at) AS first, count(*)::int AS n FROM auctions WHERE is_live`,
  )) as { first: Date; n: number }[];
  const soon = new Date(live.first.getTime() + 24 * 3600 * 1000).toISOString();
  const [{ soonCount }] = (await db.query(
    `SELECT count(*)::int AS "soonCount" FROM auctions WHERE is_live AND auction_end_at <= $1`,
    [soon],
  )) as { soonCount: number }[];
  notes.push(`live ending soon: ending_before=${soon} (${soonCount} of ${live.n} live auctions)`);

  const bidAuctions = (await db.query(
    `SELECT auction_id::text AS id, count(*)::int AS n FROM bids WHERE auction_id IN (
        SELECT auction_id FROM bids ORDER BY id DESC LIMIT 20000) GROUP BY 1 ORDER BY 2 DESC LIMIT 3`,
  )) as { id: string; n: number }[];
  notes.push(`bids: auctions ${bidAuctions.map((a) => `${a.id} (${a.n} bids)`).join(', ')}`);

  const classes: MixClass[] = [
    {
      name: 'make',
      description: 'make only',
      paths: makes.map((m) => `/auctions?${q({ make: m.make })}`),
    },
    {
      name: 'make_model_years',
      description: 'make + model + year range',
      paths: models.map((m) => `/auctions?${q({ make: m.make, model: m.model, year_min: m.lo, year_max: m.hi })}`),
    },
    {
      name: 'keyword_selective',
      description: 'selective keyword',
      paths: selective.map((k) => `/auctions?${q({ keyword: k.keyword })}`),
    },
    {
      name: 'keyword_broad',
      description: 'broad keyword (~1/3 of rows)',
      paths: [`/auctions?${q({ keyword: broad[0].keyword })}`],
    },
    {
      name: 'price_sort',
      description: 'sort by price',
      paths: [`/auctions?${q({ sort: 'price', direction: 'desc' })}`, `/auctions?${q({ sort: 'price', direction: 'asc', status: 'sold' })}`],
    },
    {
      name: 'vin',
      description: 'exact vin',
      paths: vins.map((v) => `/auctions?${q({ vin: v.vin })}`),
    },
    {
      name: 'live_ending_soon',
      description: 'live, ending soon',
      paths: [
        `/auctions/live?${q({ ending_before: soon })}`,
        `/auctions/live?${q({ sort: 'ending', limit: 20 })}`,
        `/auctions/live?${q({ keyword: makes[0].make.toLowerCase(), ending_before: soon })}`,
      ],
    },
    {
      name: 'bids',
      description: 'bids of one auction',
      paths: bidAuctions.map((a) => `/auctions/${a.id}/bids`),
    },
    {
      name: 'deep_page',
      description: 'page 200 of a broad query',
      paths: [`/auctions?${q({ page: 200 })}`, `/auctions?${q({ make: makes[0].make, page: 200 })}`],
    },
  ];
  for (const c of classes) if (c.paths.length === 0) throw new Error(`no data for request class ${c.name}`);
  return { classes, notes };
}

/** Round-robin over classes, cycling through each class's variants. */
export function interleave(classes: MixClass[], length = 360): BenchRequest[] {
  const mix: BenchRequest[] = [];
  for (let i = 0; mix.length < length; i += 1) {
    for (const c of classes) mix.push({ name: c.name, path: c.paths[i % c.paths.length] });
  }
  return mix;
}
