import { Observation, ObservationAuction, errorMessage } from '@cars/contracts';
import { pgPoolOf, rows, withTransaction } from '@cars/persistence';
import { Pool, PoolClient } from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DataSource } from 'typeorm';
import { ReferenceCache } from '../normalization/reference-cache';
import { AUCTION_COLUMN_TYPES, AUCTION_COLUMNS, AuctionRow, BidRow, buildAuctionRow, buildBidRow } from '../observations/auction-row';
import { PendingReasons } from '../observations/batch-planner';
import { auctionKey } from '../observations/keys';
import { ObservationRepository } from '../observations/observation.repository';
import { insertBidsSql, refreshBidderCountsSql, registerIdentitiesSql, upsertAuctionsSql } from '../observations/write-statements';
import { copyLine } from './copy-text';

export interface BulkLoadOptions {
  /** Observations per COPY round (one transaction each). */
  chunkSize?: number;
  /** Called after each chunk with the number of observations read so far. */
  onProgress?: (observations: number) => void;
  /** first_seen_at of the bid identities registered. Default: now. */
  now?: Date;
  /**
   * Chunks merged at once, each in its own transaction on a connection of the pool. Default 1: row
   * building of the next chunk already overlaps the merge, and concurrent merges contend on rollup
   * triggers.
   */
  concurrency?: number;
}

export interface BulkLoadResult {
  observations: number;
  /** Auction rows written (inserted, or updated by a newer observation). */
  auctions: number;
  /** Bid rows inserted (each with its identity registered). */
  bids: number;
  /** Bids-only observations whose auction is not stored: parked in pending_observations. */
  pending: number;
  /** Observations that could not be turned into rows (impossible times…), with why. */
  rejected: { source: string; source_auction_id: string; reason: string }[];
  /** Unknown sources are parked too. */
  unknownSource: number;
  ms: number;
}

/** Staged bid columns; `ord` is the bid's position in its chunk. */
const BID_STAGE_COLUMNS = [
  'ord',
  'source',
  'source_auction_id',
  'source_bid_id',
  'bidder_name',
  'amount',
  'currency',
  'bid_at',
  'bid_at_local',
] as const;

type StagedBid = BidRow & { source_auction_id: string };

/**
 * A chunk's staging tables, created in its transaction and dropped at its commit (or rollback):
 * nothing is left on the pool's connections.
 */
const CREATE_STAGING_SQL = `
  CREATE TEMP TABLE bulk_auctions (${AUCTION_COLUMNS.map((c) => `${c} ${AUCTION_COLUMN_TYPES[c]}`).join(', ')}) ON COMMIT DROP;
  CREATE TEMP TABLE bulk_bids (
    ord int, source text, source_auction_id text, source_bid_id text, bidder_name text, amount bigint,
    currency char(3), bid_at timestamptz, bid_at_local timestamp) ON COMMIT DROP`;

/**
 * The staged auctions as the write path's upsert reads them, with the distinct bidders of the
 * chunk's bids (exact for a new auction; a stored one is recounted after its bids are merged).
 */
const STAGED_AUCTIONS = `(
    SELECT s.*, c.n AS unique_bidder_count
    FROM bulk_auctions s
    LEFT JOIN (SELECT source, source_auction_id, count(DISTINCT bidder_name)::int AS n FROM bulk_bids GROUP BY 1, 2) c
      ON c.source = s.source AND c.source_auction_id = s.source_auction_id
  ) AS x`;

/** The staged bids under their stored auction, once per identity (the latest in the chunk wins). */
const STAGED_BIDS = `(
    SELECT DISTINCT ON (s.source, s.source_bid_id) s.ord, a.id AS auction_id, s.source, s.source_bid_id,
           s.bidder_name, s.amount, s.currency, s.bid_at, s.bid_at_local
    FROM bulk_bids s JOIN auctions a ON a.source = s.source AND a.source_auction_id = s.source_auction_id
    ORDER BY s.source, s.source_bid_id, s.ord DESC
  ) AS x`;

/** A stored auction is rewritten only by a newer observation, so loading a file again writes nothing. */
const MERGE_AUCTIONS_SQL = upsertAuctionsSql(STAGED_AUCTIONS, { newerOnly: true });

/** New bids and their identities in one statement; returns how many identities were registered. */
const MERGE_BIDS_SQL = `
  WITH new_bids AS (${insertBidsSql(STAGED_BIDS)}),
  registered AS (${registerIdentitiesSql('new_bids AS x', '$1')})
  SELECT count(*)::int AS n FROM registered`;

const RECOUNT_BIDDERS_SQL = refreshBidderCountsSql(`ARRAY(
    SELECT a.id FROM auctions a
    JOIN unnest($1::text[], $2::text[]) AS k(source, source_auction_id)
      ON a.source = k.source AND a.source_auction_id = k.source_auction_id)`);

/**
 * Loads an initial data set fast, without events: the same normalization and row building as
 * the pipeline, rows streamed with COPY into staging tables, then merged with the pipeline's
 * statements (write-statements.ts) over them (auction upserts keep the newest observation; bids
 * are inserted once per identity and their identities registered, so a later observation of the
 * same bid never fires `bid.created`). Idempotent: loading the same file twice changes nothing.
 */
export async function bulkLoadObservations(
  dataSource: DataSource,
  observations: Iterable<Observation> | AsyncIterable<Observation>,
  options: BulkLoadOptions = {},
): Promise<BulkLoadResult> {
  const started = Date.now();
  const chunkSize = options.chunkSize ?? 10000;
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const now = options.now ?? new Date();
  const pool = pgPoolOf(dataSource);
  /** Chunks being merged: a load that stops early (its input failed) lets them finish first. */
  const inFlight = new Set<Promise<void>>();
  const result: BulkLoadResult = { observations: 0, auctions: 0, bids: 0, pending: 0, rejected: [], unknownSource: 0, ms: 0 };
  try {
    const repository = new ObservationRepository(pool);
    // One consistent version of the normalization tables and sources.
    const reference = await withTransaction(pool, (client) => new ReferenceCache().get(client));
    let failure: unknown;

    const bidsOnly: Observation[] = [];
    const parked: Observation[] = [];
    let auctions = new Map<string, AuctionRow>();
    let bids: StagedBid[] = [];
    let read = 0;

    const flush = async () => {
      if (auctions.size === 0 && bids.length === 0) return;
      while (inFlight.size >= concurrency) await Promise.race(inFlight);
      if (failure) throw failure;
      const chunk = { auctions: [...auctions.values()], bids, read };
      auctions = new Map();
      bids = [];
      const job: Promise<void> = mergeChunk(pool, chunk.auctions, chunk.bids, now)
        .then((merged) => {
          result.auctions += merged.auctions;
          result.bids += merged.bids;
          options.onProgress?.(chunk.read);
        })
        .catch((error: unknown) => {
          failure ??= error;
        })
        .finally(() => {
          inFlight.delete(job);
        });
      inFlight.add(job);
    };

    for await (const observation of observations) {
      read += 1;
      const source = reference.sources.get(observation.source);
      if (!source) {
        parked.push(observation);
        result.unknownSource += 1;
        continue;
      }
      try {
        const key = auctionKey(observation.source, observation.source_auction_id);
        const rowBids = (observation.bids ?? []).map((bid) => ({
          ...buildBidRow(bid, source),
          source_auction_id: observation.source_auction_id,
        }));
        if (observation.auction) {
          const names = reference.normalizer.normalize(observation.auction.make, observation.auction.model);
          const row = buildAuctionRow(observation as Observation & { auction: ObservationAuction }, source, names);
          const previous = auctions.get(key);
          if (!previous || row.observed_at >= previous.observed_at) auctions.set(key, row);
        } else {
          bidsOnly.push(observation);
        }
        bids.push(...rowBids);
      } catch (error) {
        result.rejected.push({
          source: observation.source,
          source_auction_id: observation.source_auction_id,
          reason: errorMessage(error),
        });
      }
      if (auctions.size >= chunkSize || bids.length >= chunkSize * 20) await flush();
    }
    await flush();
    await Promise.all(inFlight);
    if (failure) throw failure;
    result.observations = read;

    // Bids-only observations whose auction never came: pending, like the pipeline does.
    if (bidsOnly.length > 0) {
      const found = await rows<{ source: string; source_auction_id: string }>(
        pool,
        `SELECT source, source_auction_id FROM auctions a
         JOIN unnest($1::text[], $2::text[]) AS k(s, i) ON a.source = k.s AND a.source_auction_id = k.i`,
        [bidsOnly.map((o) => o.source), bidsOnly.map((o) => o.source_auction_id)],
      );
      const stored = new Set(found.map((r) => auctionKey(r.source, r.source_auction_id)));
      const orphans = bidsOnly.filter((o) => !stored.has(auctionKey(o.source, o.source_auction_id)));
      // Their parent may have come in a later chunk than they did: load their bids now.
      const late: StagedBid[] = bidsOnly
        .filter((o) => stored.has(auctionKey(o.source, o.source_auction_id)))
        .flatMap((o) => (o.bids ?? []).map((bid) => ({ ...buildBidRow(bid, reference.sources.get(o.source)!), source_auction_id: o.source_auction_id })));
      if (late.length > 0) result.bids += (await mergeChunk(pool, [], late, now)).bids;
      await park(repository, pool, orphans, PendingReasons.ParentMissing);
      result.pending = orphans.length;
    }
    await park(repository, pool, parked, PendingReasons.UnknownSource);
    result.ms = Date.now() - started;
    return result;
  } finally {
    await Promise.allSettled([...inFlight]);
  }
}

/**
 * The load's transactions commit asynchronously (`asyncCommit`): each chunk is re-runnable
 * (idempotent), so a database crash losing the last commits costs nothing but loading the file
 * again. A chunk that deadlocks with a concurrent chunk is simply run again (withTransaction's
 * retries).
 */
const LOAD_TRANSACTION = { asyncCommit: true } as const;

/** Parks observations in pending_observations with the write path's statement, 1,000 at a time, in one transaction. */
async function park(repository: ObservationRepository, pool: Pool, observations: Observation[], reason: string): Promise<void> {
  if (observations.length === 0) return;
  await withTransaction(
    pool,
    async (client) => {
      for (let i = 0; i < observations.length; i += 1000) {
        const slice = observations.slice(i, i + 1000);
        await repository.insertPending(
          client,
          slice.map((o) => ({ source: o.source, source_auction_id: o.source_auction_id, reason, observation: o, received_at: null })),
        );
      }
    },
    LOAD_TRANSACTION,
  );
}

async function copyInto(client: PoolClient, table: string, columns: readonly string[], lines: Iterable<string>): Promise<void> {
  const stream = client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN`));
  await pipeline(Readable.from(batched(lines)), stream);
}

function* batched(lines: Iterable<string>): Generator<string> {
  let buffer = '';
  for (const line of lines) {
    buffer += line;
    if (buffer.length > 1 << 20) {
      yield buffer;
      buffer = '';
    }
  }
  if (buffer) yield buffer;
}

/**
 * One chunk in one transaction: COPY into staging tables of its own, then the write path's auction
 * upsert and bid inserts over them. Auctions that got bids without being inserted by this chunk
 * (stored ones, bids-only observations) have their bidder count recounted.
 */
function mergeChunk(pool: Pool, auctions: AuctionRow[], bids: StagedBid[], now: Date): Promise<{ auctions: number; bids: number }> {
  return withTransaction(pool, async (client) => {
    await client.query(CREATE_STAGING_SQL);
    await copyInto(client, 'bulk_auctions', AUCTION_COLUMNS, (function* () {
      for (const row of auctions) yield copyLine(AUCTION_COLUMNS.map((c) => row[c]));
    })());
    await copyInto(client, 'bulk_bids', BID_STAGE_COLUMNS, (function* () {
      for (const [ord, bid] of bids.entries()) yield copyLine(BID_STAGE_COLUMNS.map((c) => (c === 'ord' ? ord : bid[c])));
    })());
    const written = await client.query<{ source: string; source_auction_id: string; inserted: boolean }>(MERGE_AUCTIONS_SQL);
    const merged = await client.query<{ n: number }>(MERGE_BIDS_SQL, [now.toISOString()]);
    const inserted = new Set(written.rows.filter((w) => w.inserted).map((w) => auctionKey(w.source, w.source_auction_id)));
    const recount = new Map<string, StagedBid>();
    for (const bid of bids) {
      const key = auctionKey(bid.source, bid.source_auction_id);
      if (!inserted.has(key)) recount.set(key, bid);
    }
    if (recount.size > 0) {
      const keys = [...recount.values()];
      await client.query(RECOUNT_BIDDERS_SQL, [keys.map((b) => b.source), keys.map((b) => b.source_auction_id)]);
    }
    return { auctions: written.rows.length, bids: merged.rows[0]?.n ?? 0 };
  }, LOAD_TRANSACTION);
}
