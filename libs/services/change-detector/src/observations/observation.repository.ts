import { Inject, Injectable } from '@nestjs/common';
import { EventAuction } from '@cars/contracts';
import { PG_POOL } from '@cars/persistence';
import { Pool, PoolClient } from 'pg';
import { withTransaction } from '../database/pg';
import { AuctionRow, BidRow } from './auction-row';
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
 * The pipeline's SQL. Every statement is multi-row (one round trip per batch) and prepared. Rows
 * travel as one JSON array per statement; the statements that write auctions, bids and
 * identities are shared with the bulk loader (write-statements.ts).
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

export const UPSERT_AUCTIONS_SQL = upsertAuctionsSql(jsonRows('$1', AUCTION_ROW_TYPES));
const INSERT_BIDS_SQL = insertBidsSql(jsonRows('$1', BID_ROW_TYPES));
const REGISTER_IDENTITIES_SQL = registerIdentitiesSql(
  'unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS x(source, source_bid_id, id, auction_id)',
  '$5',
);
const REFRESH_BIDDER_COUNTS_SQL = refreshBidderCountsSql('$1::bigint[]');

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

  /** The database clock of this transaction (`now()` is the transaction's start time). */
  async transactionTime(client: PoolClient): Promise<Date> {
    const { rows } = await client.query<{ now: Date }>('SELECT now() AS now');
    return rows[0].now;
  }

  /**
   * Serializes work on the same source auctions across transactions and processes (held to
   * commit), in a fixed order so two batches cannot deadlock; returns the normalization version.
   */
  async lockKeys(client: PoolClient, keys: string[]): Promise<string> {
    const { rows } = await client.query<{ version: string }>({
      name: 'cd_lock_keys',
      text: `
        SELECT (SELECT version::text FROM reference_versions WHERE name = 'normalization') AS version,
               (SELECT count(*) FROM (
                  SELECT pg_advisory_xact_lock(h)
                  FROM (SELECT hashtextextended(k, 727002) AS h FROM unnest($1::text[]) AS k ORDER BY 1) ordered
               ) locked) AS locked`,
      values: [keys],
    });
    return rows[0]?.version ?? '0';
  }

  async findForUpdate(client: PoolClient, sources: string[], ids: string[]): Promise<ExistingAuction[]> {
    const { rows } = await client.query<ExistingAuction>({
      name: 'cd_find_auctions',
      text: `
        SELECT a.id::text AS id, a.source, a.source_auction_id, a.url, a.title, a.source_status AS status,
               a.price::float8 AS price, a.currency, a.year::int AS year, a.listing_make AS make, a.listing_model AS model,
               to_char(a.auction_end_local, 'YYYY-MM-DD"T"HH24:MI:SS') AS auction_end_at,
               a.auction_end_date::text AS auction_end_date, a.bid_count, a.sale_type, a.price_type,
               to_char(a.observed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS observed_at,
               a.ocd_make_name
        FROM auctions a
        JOIN unnest($1::text[], $2::text[]) AS k(source, source_auction_id)
          ON a.source = k.source AND a.source_auction_id = k.source_auction_id
        ORDER BY a.id
        FOR UPDATE OF a`,
      values: [sources, ids],
    });
    return rows;
  }

  /**
   * Auctions with parked observations whose missing context has arrived: their source is known
   * now and, for those waiting for their parent, the parent auction is stored. Oldest first.
   */
  async readyPendingKeys(client: PoolClient, limit: number, parentMissing: string): Promise<{ source: string; source_auction_id: string }[]> {
    const { rows } = await client.query<{ source: string; source_auction_id: string }>({
      name: 'cd_ready_pending_keys',
      text: `
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

  /** Takes the pending observations of these auctions out of the table (oldest first). */
  async takePending(client: PoolClient, sources: string[], ids: string[]): Promise<PendingRow[]> {
    const { rows } = await client.query<PendingRow>({
      name: 'cd_take_pending',
      text: `
        DELETE FROM pending_observations p
        USING unnest($1::text[], $2::text[]) AS k(source, source_auction_id)
        WHERE p.source = k.source AND p.source_auction_id = k.source_auction_id
        RETURNING p.id::text AS id, p.source, p.source_auction_id, p.observation, p.received_at::text AS received_at`,
      values: [sources, ids],
    });
    return rows.sort((a, b) => Number(a.id) - Number(b.id));
  }

  async upsertAuctions(
    client: PoolClient,
    rows: (AuctionRow & { unique_bidder_count: number | null })[],
  ): Promise<{ id: string; source: string; source_auction_id: string; inserted: boolean }[]> {
    if (rows.length === 0) return [];
    const result = await client.query<{ id: string; source: string; source_auction_id: string; inserted: boolean }>({
      name: 'cd_upsert_auctions',
      text: UPSERT_AUCTIONS_SQL,
      values: [JSON.stringify(rows)],
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
      name: 'cd_update_bids',
      text: `
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
      name: 'cd_bidder_names',
      text: `SELECT auction_id::text AS auction_id, array_agg(DISTINCT bidder_name) FILTER (WHERE bidder_name IS NOT NULL) AS names
             FROM bids WHERE auction_id = ANY($1::bigint[]) GROUP BY auction_id`,
      values: [auctionIds],
    });
    return new Map(rows.map((r) => [r.auction_id, r.names ?? []]));
  }

  /** Recounts the distinct bidders of these auctions (those that got bids without a row write). */
  async refreshBidderCounts(client: PoolClient, auctionIds: string[]): Promise<void> {
    if (auctionIds.length === 0) return;
    await client.query({ name: 'cd_bidder_counts', text: REFRESH_BIDDER_COUNTS_SQL, values: [auctionIds] });
  }

  /**
   * Adds the description tokens the vocabulary may lack and tells the vocabulary triggers of this
   * transaction that the writer did (migration DescriptionTokens): call before writing auctions.
   */
  async recordDescriptionTokens(client: PoolClient, tokens: string[]): Promise<void> {
    await client.query({
      name: 'cd_description_tokens',
      text: `SELECT set_config('cars.description_tokens_recorded', 'on', true), add_description_tokens($1::text[])`,
      values: [tokens],
    });
  }

  async insertEvents(client: PoolClient, events: OutboxInsert[]): Promise<void> {
    if (events.length === 0) return;
    await client.query({
      name: 'cd_insert_events_v2',
      text: `
        INSERT INTO events (id, type, api_version, created_at, payload, auction_id, make, source, listed_make)
        SELECT id, type, api_version, created_at, payload, auction_id, make, source, listed_make
        FROM json_to_recordset($1::json) AS x(ord int, id text, type text, api_version text, created_at timestamptz,
          payload json, auction_id bigint, make text, source text, listed_make text)
        ORDER BY ord`,
      values: [JSON.stringify(events.map((event, ord) => ({ ...event, ord })))],
    });
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
