import { generateObservations } from '@cars/datagen';
import { createDataSource, runMigrations } from '@cars/persistence';
import { bulkLoadObservations, NormalizationService } from '@cars/service-change-detector';
import { adminQuery, databaseUrlFor } from '@cars/testing';
import { Client } from 'pg';
import { DataSource, MigrationInterface } from 'typeorm';

/**
 * The benchmark's own database, `cars_bench_query`, holding `auctions` auctions in total (of
 * which `live` are live), made with the project's data generator (`@cars/datagen`) and loaded
 * with the change-detector's bulk loader (same normalization and rows as the pipeline). Loading
 * takes a while, so a database already loaded at the same size and seed is reused.
 */
export const BENCH_DATABASE = 'cars_bench_query';

export interface DatasetOptions {
  auctions: number;
  live: number;
  seed: string;
  reload: boolean;
  /** Another database than BENCH_DATABASE (another benchmark's data set of another size). */
  database?: string;
}

export interface DatasetInfo {
  databaseUrl: string;
  auctions: number;
  live: number;
  bids: number;
  loadedAt: string;
  reused: boolean;
  loadSeconds?: number;
}

const log = (message: string) => process.stderr.write(`bench:query ${message}\n`);

async function ensureDatabase(name: string): Promise<string> {
  const admin = new Client({ connectionString: databaseUrlFor('postgres') });
  await admin.connect();
  try {
    const { rowCount } = await admin.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [name]);
    if (!rowCount) await adminQuery(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  return databaseUrlFor(name);
}

interface Marker {
  /** Requested size. */
  auctions: number;
  /** Auction rows stored (datagen's junk observations are not). */
  rows: number;
  live: number;
  seed: string;
  loaded_at: Date;
}

async function readMarker(db: DataSource): Promise<Marker | null> {
  await db.query(`
    CREATE TABLE IF NOT EXISTS bench_query_dataset (
      auctions integer NOT NULL, rows integer NOT NULL, live integer NOT NULL, seed text NOT NULL,
      loaded_at timestamptz NOT NULL)`);
  const [row] = (await db.query(`SELECT auctions, rows, live, seed, loaded_at FROM bench_query_dataset`)) as Marker[];
  return row ?? null;
}

/** The query migration's indexes and triggers are dropped for the load and rebuilt after it. */
function queryIndexesMigration(db: DataSource): MigrationInterface {
  const migration = db.migrations.find((m) => m.name === 'QueryIndexes1763900000000');
  if (!migration) throw new Error('migration QueryIndexes1763900000000 is not registered');
  return migration;
}

export async function prepareDataset(options: DatasetOptions): Promise<DatasetInfo> {
  const database = options.database ?? BENCH_DATABASE;
  const databaseUrl = await ensureDatabase(database);
  const db = await createDataSource({ url: databaseUrl, poolSize: 4, applicationName: 'bench-query-load' }).initialize();
  try {
    await runMigrations(db);
    const marker = await readMarker(db);
    const [{ total }] = (await db.query(`SELECT count(*)::int AS total FROM auctions`)) as { total: number }[];
    const [{ bids }] = (await db.query(
      `SELECT reltuples::bigint::text AS bids FROM pg_class WHERE relname = 'bids'`,
    )) as { bids: string }[];
    if (
      !options.reload &&
      marker &&
      marker.auctions === options.auctions &&
      marker.live === options.live &&
      marker.seed === options.seed &&
      total === marker.rows
    ) {
      log(`reusing ${database}: ${total} auctions loaded at ${marker.loaded_at.toISOString()}`);
      return { databaseUrl, auctions: total, live: marker.live, bids: Number(bids), loadedAt: marker.loaded_at.toISOString(), reused: true };
    }

    log(`loading ${options.auctions} auctions (${options.live} live, seed ${options.seed}) into ${database}…`);
    const started = Date.now();
    await db.query(`DELETE FROM bench_query_dataset`);
    await db.query(`TRUNCATE auctions, bids, bid_identities, events, pending_observations RESTART IDENTITY CASCADE`);
    const runner = db.createQueryRunner();
    try {
      await queryIndexesMigration(db).down(runner);
    } finally {
      await runner.release();
    }
    await new NormalizationService(db).loadReference();
    let lastLog = Date.now();
    const result = await bulkLoadObservations(
      db,
      generateObservations({ auctions: options.auctions - options.live, live: options.live, seed: options.seed }),
      {
        chunkSize: 20000,
        onProgress: (read) => {
          if (Date.now() - lastLog > 10000) {
            lastLog = Date.now();
            log(`  ${read} observations loaded, ${Math.round((Date.now() - started) / 1000)} s`);
          }
        },
      },
    );
    log(`  bulk load: ${result.auctions} auction rows, ${result.bids} bids in ${Math.round(result.ms / 1000)} s`);
    log('  building the query indexes (migration QueryIndexes)…');
    const indexRunner = db.createQueryRunner();
    try {
      await queryIndexesMigration(db).up(indexRunner);
    } finally {
      await indexRunner.release();
    }
    log('  VACUUM ANALYZE…');
    await db.query(`VACUUM ANALYZE auctions`);
    await db.query(`VACUUM ANALYZE bids`);
    const [{ loaded }] = (await db.query(`SELECT count(*)::int AS loaded FROM auctions`)) as { loaded: number }[];
    const [{ live }] = (await db.query(`SELECT count(*)::int AS live FROM auctions WHERE is_live`)) as { live: number }[];
    const [{ bidRows }] = (await db.query(`SELECT count(*)::int AS "bidRows" FROM bids`)) as { bidRows: number }[];
    await db.query(
      `INSERT INTO bench_query_dataset (auctions, rows, live, seed, loaded_at) VALUES ($1, $2, $3, $4, now())`,
      [options.auctions, loaded, options.live, options.seed],
    );
    const loadSeconds = Math.round((Date.now() - started) / 1000);
    log(`  ${loaded} auctions (${live} live), ${bidRows} bids ready in ${loadSeconds} s`);
    if (loaded !== options.auctions) log(`  note: ${loaded} rows for ${options.auctions} requested (datagen junk rows are rejected)`);
    return { databaseUrl, auctions: loaded, live, bids: bidRows, loadedAt: new Date().toISOString(), reused: false, loadSeconds };
  } finally {
    await db.destroy();
  }
}
