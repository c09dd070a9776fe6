import { AuctionRecord, BidRecord, SOURCES } from '@cars/persistence';
import { DataSource } from 'typeorm';
import { createIsolatedDatabase } from '../database';
import { createVhost, deleteVhost } from '../test-infra';

/**
 * Auction and bid rows for tests, inserted with SQL (the schema of migration InitialSchema).
 * Every column has a plausible default; pass only what a test is about.
 */
export interface AuctionSeed extends Omit<AuctionRecord, 'auction_end_local'> {
  auction_end_local?: string | null;
  unique_bidder_count: number | null;
  created_at: string;
  updated_at: string;
}

export interface BidSeed extends Omit<BidRecord, 'bid_at_local'> {
  auction_id: number;
  bid_at_local?: string | null;
  created_at: string;
}

let sequence = 0;
const next = () => `${process.pid}-${Date.now().toString(36)}-${++sequence}`;

/** A completed Bring a Trailer sale of a 1967 Porsche 911 unless overridden. */
export function auctionSeed(overrides: Partial<AuctionSeed> = {}): AuctionSeed {
  const id = next();
  const live = overrides.is_live ?? false;
  const source = overrides.source ?? 'bringatrailer';
  return {
    source,
    source_auction_id: `test-${id}`,
    url: `https://${source}.example.com/listing/${id}`,
    title: '1967 Porsche 911S Coupe',
    source_status: live ? 'active' : 'sold',
    auction_status: live ? null : 'sold',
    is_live: live,
    price: 145000,
    currency: 'USD',
    price_usd: overrides.price ?? 145000,
    auction_end_date: '2025-06-01',
    auction_end_at: '2025-06-01T19:00:00Z',
    mileage: 52000,
    mileage_unit: 'mi',
    vin: null,
    title_status: 'clean',
    city: 'Portland',
    state: 'OR',
    zip: '97201',
    country_code: 'US',
    seller_username: 'classic_seller',
    seller_type: 'private',
    year: 1967,
    has_reserve: true,
    listing_make: 'Porsche',
    listing_model: '911S',
    ocd_make_name: 'Porsche',
    ocd_model_name: '911',
    engine: '2.0L flat-six',
    drivetrain: 'RWD',
    transmission: '5-speed manual',
    body_style: 'Coupe',
    exterior_color: 'Irish Green',
    standard_exterior_color: 'Green',
    interior_color: 'Black leatherette',
    standard_interior_color: 'Black',
    description: 'A numbers-matching 911S with a rebuilt engine.',
    ownership_history: 'Two owners.',
    modifications: [],
    known_flaws: [],
    recent_service_history: [],
    listing_details: [],
    featured_image_url: `https://${source}.example.com/images/${id}.jpg`,
    views: 1000,
    watches: 100,
    likes: 10,
    comments: 5,
    bid_count: 20,
    unique_bidder_count: 8,
    sale_type: 'auction',
    price_type: live ? 'bid' : 'sold',
    created_at: '2025-05-25T12:00:00Z',
    updated_at: '2025-06-01T19:05:00Z',
    observed_at: '2025-06-01T19:05:00Z',
    ...overrides,
  };
}

/** The platforms of SOURCES, so auctions can reference them (idempotent). */
export async function ensureSources(db: DataSource): Promise<void> {
  for (const source of SOURCES) {
    await db.query(
      `INSERT INTO sources (id, name, live, timezone) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING`,
      [source.id, source.name, source.live, source.timezone],
    );
  }
}

/**
 * Inserts seed rows in one statement and returns their ids in the order of `seeds`. The columns are
 * every key any seed sets (a column a row leaves undefined takes the table default); rows are
 * matched back to their ids through the unique (source, `key`).
 */
async function insertRows<T extends { source: string }>(
  db: DataSource,
  table: 'auctions' | 'bids',
  key: keyof T & string,
  seeds: T[],
): Promise<number[]> {
  if (seeds.length === 0) return [];
  const columns = [...new Set(seeds.flatMap((seed) => Object.keys(seed)))] as (keyof T & string)[];
  const values: unknown[] = [];
  const rows = seeds.map((seed) => {
    const cells = columns.map((column) => {
      if (seed[column] === undefined) return 'DEFAULT';
      values.push(seed[column]);
      return `$${values.length}`;
    });
    return `(${cells.join(', ')})`;
  });
  const inserted: { id: string; source: string; key: string }[] = await db.query(
    `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${rows.join(', ')} RETURNING id, source, ${key} AS key`,
    values,
  );
  const idOf = new Map(inserted.map((row) => [`${row.source}\u0000${row.key}`, Number(row.id)]));
  return seeds.map((seed) => {
    const id = idOf.get(`${seed.source}\u0000${String(seed[key])}`);
    if (id === undefined) throw new Error(`${table}: no id came back for ${seed.source} ${String(seed[key])}`);
    return id;
  });
}

/**
 * Inserts the auctions (in one statement) and returns their ids in the order given. An override
 * may set any column of the table, also one without a default here.
 */
export async function insertAuctions(db: DataSource, overrides: Partial<AuctionSeed>[]): Promise<number[]> {
  if (overrides.length === 0) return [];
  await ensureSources(db);
  return insertRows(db, 'auctions', 'source_auction_id', overrides.map((o) => auctionSeed(o)));
}

export async function insertAuction(db: DataSource, overrides: Partial<AuctionSeed> = {}): Promise<number> {
  const [id] = await insertAuctions(db, [overrides]);
  return id;
}

export function bidSeed(auctionId: number, overrides: Partial<BidSeed> = {}): BidSeed {
  return {
    auction_id: auctionId,
    source: 'bringatrailer',
    source_bid_id: `bid-${next()}`,
    bidder_name: 'aircooled77',
    amount: 100000,
    currency: 'USD',
    bid_at: '2025-06-01T18:59:00Z',
    created_at: '2025-06-01T19:00:00Z',
    ...overrides,
  };
}

/** Inserts the auction's bids (in one statement) and returns their ids in the order given. */
export async function insertBids(
  db: DataSource,
  auctionId: number,
  overrides: Partial<BidSeed>[],
): Promise<number[]> {
  return insertRows(db, 'bids', 'source_bid_id', overrides.map((o) => bidSeed(auctionId, o)));
}

/**
 * A database (migrated) and a RabbitMQ vhost of a spec's own, made current through DATABASE_URL
 * and RABBITMQ_URL for `startTestStack`: the spec's counts are not disturbed by other specs'
 * auctions, and no other spec's query service answers its RPC requests. `restore()` puts the
 * run's URLs back and drops both.
 */
export async function useIsolatedQueryEnvironment(suffix: string): Promise<{ restore(): Promise<void> }> {
  const runId = process.env.TEST_RUN_ID ?? 'cars_test';
  const { url, drop } = await createIsolatedDatabase(suffix);
  const vhost = `${runId}_${suffix}`;
  const rabbitUrl = createVhost(vhost);
  const previous = { database: process.env.DATABASE_URL, rabbit: process.env.RABBITMQ_URL };
  process.env.DATABASE_URL = url;
  process.env.RABBITMQ_URL = rabbitUrl;
  return {
    async restore() {
      process.env.DATABASE_URL = previous.database;
      process.env.RABBITMQ_URL = previous.rabbit;
      await drop();
      deleteVhost(vhost);
    },
  };
}
