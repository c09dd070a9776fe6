import { Inject, Injectable } from '@nestjs/common';
import { EventAuction } from '@cars/contracts';
import { PG_POOL, withTransaction } from '@cars/persistence';
import { Pool, PoolClient } from 'pg';
import { AuctionRow, BidRow } from './auction-row';
import { copyRows } from './copy-rows';
import { identityKey } from './keys';
import {
  AUCTION_ROW_TYPES,
  BID_ROW_TYPES,
  insertBidsSql,
  jsonRows,
  refreshBidderCountsSql,
  registerIdentitiesSql,
  upsertAuctionsSql,
} from './write-statements';

/**
 * The pipeline's SQL. Every statement is multi-row (one round trip per batch). Auction rows and
 * outbox events travel by COPY (copy-rows.ts), the others as one JSON array per statement; the
 * statements that write auctions, bids and identities are shared with the bulk loader
 * (write-statements.ts).
 *
 * Statements whose plan does not depend on table sizes (inserts from the batch's rows, the lock)
 * are prepared once per connection (`name`). Those that look rows up in `auctions`, `bids` or
 * `pending_observations` are sent unnamed, so each batch is planned with its own keys and the
 * tables' current size: a prepared statement keeps the generic plan it made first, and one made
 * while a table was empty (a fresh database, or the first minute of a backfill) scans the whole
 * table for every batch from then on. `cd_find_auctions` cost ~19 µs of PostgreSQL CPU per
 * observation that way over the ingest bench's 31,500 observations, 6 µs planned per batch
 * (~1 µs once the table's statistics are current); planning costs ~0.1 ms a batch. The leading
 * `-- name` comment names an unnamed statement (pg_stat_activity, tools/bench/ingest/breakdown.ts).
 */

/** The stored state of an auction: the event payload's captured fields plus what locates it. */
export interface ExistingAuction extends Omit<EventAuction, 'id' | 'source' | 'status'> {
  id: string;
  source: string;
  source_auction_id: string;
  status: string;
  observed_at: string;
  ocd_make_name: string | null;
}

export interface PendingRow {
  id: string;
  source: string;
  source_auction_id: string;
  observation: unknown;
  received_at: string;
}

export interface PendingSummary {
  count: number;
  oldestReceivedAt: Date | null;
  byReason: Record<string, number>;
}

export interface NewPending {
  source: string;
  source_auction_id: string;
  reason: string;
  observation: unknown;
  received_at: string | null;
}

export interface OutboxInsert {
  id: string;
  type: string;
  api_version: string;
  created_at: string;
  payload: unknown;
  auction_id: string | null;
  make: string | null;
  source: string | null;
  /** The make as the source listed it, kept while the canonical `make` is unknown (make waiting). */
  listed_make: string | null;
}

/**
 * Each connection's staging table of auction rows: `upsertAuctions` COPYs a batch's rows into it
 * and upserts from it; emptied at every commit. Created by `lockKeys` when missing (a new
 * connection, or a rolled back transaction that had created it).
 */
const AUCTION_STAGE = 'pg_temp.cd_stage_auctions';
type StagedAuction = AuctionRow & { unique_bidder_count: number | null };
const STAGED_AUCTION_COLUMNS = Object.keys(AUCTION_ROW_TYPES) as (keyof StagedAuction & string)[];
const CREATE_AUCTION_STAGE_SQL = `
  CREATE TEMP TABLE cd_stage_auctions (${STAGED_AUCTION_COLUMNS.map((c) => `${c} ${AUCTION_ROW_TYPES[c]}`).join(', ')})
  ON COMMIT DELETE ROWS`;

export const UPSERT_AUCTIONS_SQL = upsertAuctionsSql(`${AUCTION_STAGE} AS x`);

/** The outbox columns `insertEvents` COPYs, in this order (`seq` follows it). */
const EVENT_COLUMNS = ['id', 'type', 'api_version', 'created_at', 'payload', 'auction_id', 'make', 'source', 'listed_make'] as const;

const INSERT_BIDS_SQL = insertBidsSql(jsonRows('$1', BID_ROW_TYPES));
const REGISTER_IDENTITIES_SQL = registerIdentitiesSql(
  'unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS x(source, source_bid_id, id, auction_id)',
  '$5',
);
const REFRESH_BIDDER_COUNTS_SQL = `
  -- cd_bidder_counts${refreshBidderCountsSql('$1::bigint[]')}`;

/** A statement runner: the pool, or a transaction's client. */
export type Queryable = Pick<PoolClient, 'query'>;

/** A bid written by `insertBids`. */
export interface InsertedBid {
  id: string;
  source: string;
  source_bid_id: string;
  auction_id: string;
}

/**
 * The write path's reads and writes over the process's pg pool. The statements of one batch take
 * the batch's transaction client (see `transaction`), so they commit or roll back together.
 */
@Injectable()
export class ObservationRepository {
  constructor(@Inject(PG_POOL) private readonly pool: Pool) {}

  /** Runs `work` in one transaction (deadlocks and serialization failures retried). */
  transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    return withTransaction(this.pool, work);
  }

  /**
   * The first statement of a batch: serializes work on the same source auctions across
   * transactions and processes (held to commit), in a fixed order so two batches cannot
   * deadlock; returns the normalization version and the database clock of this transaction
   * (`now()`, its start time). Creates this connection's staging table when it lacks it. Also
   * tells the description-token triggers that this transaction records its tokens itself
   * (`recordDescriptionTokens`, before its auctions are written), and sets the planner for the
   * statement that follows, `findAndTakePending`, which sets it back (see there).
   */
  async lockKeys(client: PoolClient, keys: string[]): Promise<{ version: string; now: Date }> {
    const { rows } = await client.query<{ version: string | null; now: Date; staged: boolean }>({
      name: 'cd_lock_keys_v4',
      text: `
        SELECT (SELECT version::text FROM reference_versions WHERE name = 'normalization') AS version,
               set_config('cars.description_tokens_recorded', 'on', true) AS tokens_recorded_here,
               set_config('enable_seqscan', 'off', true) AS keyed_lookup_next,
               set_config('plan_cache_mode', 'force_generic_plan', true) AS generic_plan_next,
               now() AS now,
               to_regclass('${AUCTION_STAGE}') IS NOT NULL AS staged,
               (SELECT count(*) FROM (
                  SELECT pg_advisory_xact_lock(h)
                  FROM (SELECT hashtextextended(k, 727002) AS h FROM unnest($1::text[]) AS k ORDER BY 1) ordered
               ) locked) AS locked`,
      values: [keys],
    });
    if (!rows[0].staged) await client.query(CREATE_AUCTION_STAGE_SQL);
    return { version: rows[0].version ?? '0', now: rows[0].now };
  }

  /**
   * The batch's stored auctions, locked (in id order: concurrent batches lock them in the same
   * order), and the pending observations of the same auctions taken out of the table (oldest
   * first): one statement, one round trip, for what every batch reads before it decides.
   *
   * Always through the tables' key indexes, with a plan made once per connection: `lockKeys`
   * turned sequential scans off and generic plans on for it, and this statement turns both back
   * to the defaults as it runs, for the statements after it (the staging table has no index).
   * Made while `auctions` was small — a new database, or between two of autovacuum's analyses —
   * a plan with sequential scans would hash the whole table at every batch, and go on doing so
   * as the table grows (`KEYED_LOOKUPS` in libs/persistence: 1.5 ms per batch at 6,000
   * auctions, where the index takes 0.04 ms); without a forced generic plan it is planned again
   * at every batch (0.34 ms).
   */
  async findAndTakePending(
    client: PoolClient,
    sources: string[],
    ids: string[],
  ): Promise<{ stored: ExistingAuction[]; parked: PendingRow[] }> {
    const { rows } = await client.query<{ stored: ExistingAuction[]; parked: PendingRow[] }>({
      name: 'cd_find_and_take_v2',
      text: `
        -- cd_find_and_take
        WITH keys AS MATERIALIZED (
          SELECT * FROM unnest($1::text[], $2::text[]) AS k(source, source_auction_id)
        ), stored AS MATERIALIZED (
          SELECT a.id::text AS id, a.source, a.source_auction_id, a.url, a.title, a.source_status AS status,
                 a.price::float8 AS price, a.currency, a.year::int AS year, a.listing_make AS make, a.listing_model AS model,
                 to_char(a.auction_end_local, 'YYYY-MM-DD"T"HH24:MI:SS') AS auction_end_at,
                 a.auction_end_date::text AS auction_end_date, a.bid_count, a.sale_type, a.price_type,
                 to_char(a.observed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS observed_at,
                 a.ocd_make_name
          FROM auctions a
          JOIN keys k ON a.source = k.source AND a.source_auction_id = k.source_auction_id
          ORDER BY a.id
          FOR UPDATE OF a
        ), parked AS MATERIALIZED (
          DELETE FROM pending_observations p
          USING keys k
          WHERE p.source = k.source AND p.source_auction_id = k.source_auction_id
          RETURNING p.id, p.source, p.source_auction_id, p.observation, p.received_at::text AS received_at
        )
        SELECT set_config('enable_seqscan', 'on', true) AS planner_default_again,
               set_config('plan_cache_mode', 'auto', true) AS plan_cache_default_again,
               (SELECT coalesce(json_agg(s), '[]') FROM stored s) AS stored,
               (SELECT coalesce(json_agg(json_build_object('id', p.id::text, 'source', p.source, 'source_auction_id', p.source_auction_id,
                                                           'observation', p.observation, 'received_at', p.received_at) ORDER BY p.id), '[]')
                  FROM parked p) AS parked`,
      values: [sources, ids],
    });
    return rows[0];
  }

  /**
   * Auctions with parked observations whose missing context has arrived: their source is known
   * now and, for those waiting for their parent, the parent auction is stored. Oldest first.
   */
  async readyPendingKeys(client: PoolClient, limit: number, parentMissing: string): Promise<{ source: string; source_auction_id: string }[]> {
    const { rows } = await client.query<{ source: string; source_auction_id: string }>({
      text: `
        -- cd_ready_pending_keys
        SELECT p.source, p.source_auction_id
        FROM pending_observations p
        WHERE EXISTS (SELECT 1 FROM sources s WHERE s.id = p.source)
          AND (p.reason <> $2 OR EXISTS (
            SELECT 1 FROM auctions a WHERE a.source = p.source AND a.source_auction_id = p.source_auction_id))
        GROUP BY p.source, p.source_auction_id
        ORDER BY min(p.id)
        LIMIT $1`,
      values: [limit, parentMissing],
    });
    return rows;
  }

  /** How many observations wait, since when, and why. */
  async pendingSummary(client: Queryable = this.pool): Promise<PendingSummary> {
    const { rows } = await client.query<{ reason: string; count: number; oldest: Date | null }>(
      `SELECT reason, count(*)::int AS count, min(received_at) AS oldest FROM pending_observations GROUP BY reason ORDER BY reason`,
    );
    const oldest = rows.reduce<Date | null>((min, r) => (r.oldest && (!min || r.oldest < min) ? r.oldest : min), null);
    return {
      count: rows.reduce((sum, r) => sum + r.count, 0),
      oldestReceivedAt: oldest,
      byReason: Object.fromEntries(rows.map((r) => [r.reason, r.count])),
    };
  }

  /** Stages the rows (COPY) and upserts them: two round trips, one statement each. */
  async upsertAuctions(
    client: PoolClient,
    rows: StagedAuction[],
  ): Promise<{ id: string; source: string; source_auction_id: string; inserted: boolean }[]> {
    if (rows.length === 0) return [];
    await copyRows(client, AUCTION_STAGE, STAGED_AUCTION_COLUMNS, rows);
    const result = await client.query<{ id: string; source: string; source_auction_id: string; inserted: boolean }>({
      name: 'cd_upsert_staged_auctions',
      text: UPSERT_AUCTIONS_SQL,
    });
    return result.rows;
  }

  /** Inserts bids not stored yet; returns the new rows (existing identities are left alone). */
  async insertBids(client: PoolClient, bids: (BidRow & { auction_id: string })[]): Promise<InsertedBid[]> {
    if (bids.length === 0) return [];
    const { rows } = await client.query<InsertedBid>({
      name: 'cd_insert_bids',
      text: INSERT_BIDS_SQL,
      values: [JSON.stringify(bids.map((bid, ord) => ({ ...bid, ord })))],
    });
    return rows;
  }

  /** Updates the stored fields of already-known bids when the source changed them (no event). */
  async updateBids(client: PoolClient, bids: BidRow[]): Promise<void> {
    if (bids.length === 0) return;
    await client.query({
      text: `
        -- cd_update_bids
        UPDATE bids b SET bidder_name = x.bidder_name, amount = x.amount, currency = x.currency,
               bid_at = x.bid_at, bid_at_local = x.bid_at_local, updated_at = now()
        FROM json_to_recordset($1::json) AS x(source text, source_bid_id text, bidder_name text, amount bigint,
          currency char(3), bid_at timestamptz, bid_at_local timestamp)
        WHERE b.source = x.source AND b.source_bid_id = x.source_bid_id
          AND (b.bidder_name, b.amount, b.currency, b.bid_at_local)
              IS DISTINCT FROM (x.bidder_name, x.amount, x.currency, x.bid_at_local)`,
      values: [JSON.stringify(bids)],
    });
  }

  /** Registers bid identities; returns those seen for the first time ever (by `identityKey`). */
  async registerIdentities(client: PoolClient, bids: InsertedBid[], now: Date): Promise<Set<string>> {
    if (bids.length === 0) return new Set();
    const { rows } = await client.query<{ source: string; source_bid_id: string }>({
      name: 'cd_register_identities',
      text: REGISTER_IDENTITIES_SQL,
      values: [
        bids.map((b) => b.source),
        bids.map((b) => b.source_bid_id),
        bids.map((b) => b.id),
        bids.map((b) => b.auction_id),
        now.toISOString(),
      ],
    });
    return new Set(rows.map(identityKey));
  }

  /** Distinct bidder names stored per auction. */
  async bidderNames(client: PoolClient, auctionIds: string[]): Promise<Map<string, string[]>> {
    if (auctionIds.length === 0) return new Map();
    const { rows } = await client.query<{ auction_id: string; names: string[] }>({
      text: `
        -- cd_bidder_names
        SELECT auction_id::text AS auction_id, array_agg(DISTINCT bidder_name) FILTER (WHERE bidder_name IS NOT NULL) AS names
        FROM bids WHERE auction_id = ANY($1::bigint[]) GROUP BY auction_id`,
      values: [auctionIds],
    });
    return new Map(rows.map((r) => [r.auction_id, r.names ?? []]));
  }

  /** Recounts the distinct bidders of these auctions (those that got bids without a row write). */
  async refreshBidderCounts(client: PoolClient, auctionIds: string[]): Promise<void> {
    if (auctionIds.length === 0) return;
    await client.query({ text: REFRESH_BIDDER_COUNTS_SQL, values: [auctionIds] });
  }

  /**
   * Adds the description tokens the vocabulary may lack and tells the vocabulary triggers of this
   * transaction that the writer did (migration DescriptionTokens): call before writing auctions.
   */
  async recordDescriptionTokens(client: PoolClient, tokens: string[]): Promise<void> {
    // `lockKeys` told the triggers already; tokens all known (the usual batch) need no statement.
    if (tokens.length === 0) return;
    await client.query({
      name: 'cd_description_tokens',
      text: `SELECT set_config('cars.description_tokens_recorded', 'on', true), add_description_tokens($1::text[])`,
      values: [tokens],
    });
  }

  /**
   * COPYs the events into the outbox in their order (`seq` follows it; the outbox triggers fire
   * as for an INSERT). The payload's JSON text is checked once, by the `json` column.
   */
  async insertEvents(client: PoolClient, events: OutboxInsert[]): Promise<void> {
    if (events.length === 0) return;
    await copyRows(client, 'events', EVENT_COLUMNS, events);
  }

  async insertPending(client: PoolClient, pending: NewPending[]): Promise<void> {
    if (pending.length === 0) return;
    await client.query({
      name: 'cd_insert_pending',
      text: `
        INSERT INTO pending_observations (source, source_auction_id, reason, observation, received_at)
        SELECT source, source_auction_id, reason, observation, COALESCE(received_at, now())
        FROM json_to_recordset($1::json) AS x(ord int, source text, source_auction_id text, reason text,
          observation jsonb, received_at timestamptz)
        ORDER BY ord`,
      values: [JSON.stringify(pending.map((p, ord) => ({ ...p, ord })))],
    });
  }
}
