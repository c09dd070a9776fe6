import { Injectable, Logger } from '@nestjs/common';
import { buildEventEnvelope, errorMessage, EventAuction, EventTypes, Observation, ObservationAuction } from '@cars/contracts';
import { Pool, PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { isObservationError, pgPool, withTransaction } from '../database/pg';
import { ReferenceCache, ReferenceSnapshot } from '../normalization/reference-cache';
import { AuctionRow, BidRow, buildAuctionRow, buildBidRow, eventAuction } from './auction-row';
import { decideAuctionEvent, isEligible, meaningfulState } from './decisions';
import { KnownDescriptionTokens } from './description-tokens';
import {
  ExistingAuction,
  identityKey,
  NewPending,
  ObservationRepository,
  OutboxInsert,
  PendingSummary,
} from './observation.repository';

export interface ProcessOptions {
  /**
   * Observation time in the service: the envelopes' `created_at`. Default: the database clock at
   * the start of the transaction — the clock webhook activation boundaries are taken from, so the
   * delivery worker compares the two exactly.
   */
  now?: Date;
}

export interface RejectedObservation {
  /** Position in the batch given to processBatch. */
  index: number;
  reason: string;
}

export interface ProcessResult {
  /** Observations applied or parked as pending (not rejected). */
  accepted: number;
  rejected: RejectedObservation[];
  /** Observations parked in pending_observations by this batch (replayed ones that still wait included). */
  pending: number;
  /** Positions in the batch of the observations parked by it. */
  pendingIndexes: number[];
  auctionsCreated: number;
  auctionsUpdated: number;
  bidsCreated: number;
  events: number;
}

/** What became of one observation of an `ingest --wait` run. */
export interface IngestOutcome {
  runId: string;
  messageId: string;
  outcome: 'applied' | 'pending' | 'rejected';
}

export const PendingReasons = {
  ParentMissing: 'parent auction not stored',
  UnknownSource: 'unknown source',
} as const;

export { parseObservation } from './observation-validator';

interface Item {
  observation: Observation;
  /** Position in the batch, or -1 for an observation replayed from pending_observations. */
  index: number;
  receivedAt: string | null;
  row?: AuctionRow;
  excluded?: boolean;
  bids: BidRow[];
}

interface Group {
  key: string;
  source: string;
  sourceAuctionId: string;
  items: Item[];
}

const emptyResult = (): ProcessResult => ({
  accepted: 0,
  rejected: [],
  pending: 0,
  pendingIndexes: [],
  auctionsCreated: 0,
  auctionsUpdated: 0,
  bidsCreated: 0,
  events: 0,
});

/** Rounds of one replay call; the backstop's next run continues a larger backlog. */
const MAX_REPLAY_ROUNDS = 500;

const keyOf = (source: string, sourceAuctionId: string) => `${source}\u001f${sourceAuctionId}`;
/** A bid of the batch: its source id under its auction. */
const bidKey = (bid: { source_bid_id: string; auction_id: string }) => `${bid.source_bid_id}\u0000${bid.auction_id}`;

/**
 * Applies observations to the database in ONE transaction per batch (DESIGN.md §6): locks the
 * source auctions, normalizes make/model, upserts auction rows, inserts new bids and their
 * identities, decides the events from the state before and after the whole batch, and writes
 * them to the `events` outbox. Used by the RabbitMQ consumer, the quick start's ingestion entry
 * point and tests alike.
 */
@Injectable()
export class ObservationProcessor {
  private readonly logger = new Logger(ObservationProcessor.name);
  private readonly pool: Pool;
  private readonly repository = new ObservationRepository();
  private readonly reference = new ReferenceCache();
  private readonly tokens = new KnownDescriptionTokens();
  private outcomesPrunedAt = 0;

  constructor(dataSource: DataSource) {
    this.pool = pgPool(dataSource);
  }

  /** One observation, in its own transaction. */
  process(observation: Observation, options: ProcessOptions = {}): Promise<ProcessResult> {
    return this.processBatch([observation], options);
  }

  /**
   * A batch of validated observations in one transaction: initial and final state of the batch
   * decide the events. When an observation makes the batch fail (a data error, or an error the
   * code raises on it), the batch is re-applied one observation per transaction and the culprit
   * is rejected without blocking the others; transient errors (connection lost…) are thrown and
   * nothing is written.
   */
  async processBatch(observations: Observation[], options: ProcessOptions = {}): Promise<ProcessResult> {
    if (observations.length === 0) return emptyResult();
    const now = options.now;
    try {
      const recorded: string[] = [];
      const result = await withTransaction(this.pool, async (client) => {
        recorded.length = 0; // a retried transaction starts over
        return this.apply(client, observations, now ?? (await transactionTime(client)), recorded);
      });
      this.tokens.remember(recorded);
      return result;
    } catch (error) {
      if (!isObservationError(error)) throw error;
      if (observations.length === 1) {
        return { ...emptyResult(), rejected: [{ index: 0, reason: `the observation could not be applied: ${errorMessage(error)}` }] };
      }
      this.logger.warn(`batch of ${observations.length} refused (${errorMessage(error)}); applying one by one`);
      const total = emptyResult();
      for (const [index, observation] of observations.entries()) {
        const one = await this.processBatch([observation], { now });
        total.accepted += one.accepted;
        total.pending += one.pending;
        total.pendingIndexes.push(...one.pendingIndexes.map(() => index));
        total.auctionsCreated += one.auctionsCreated;
        total.auctionsUpdated += one.auctionsUpdated;
        total.bidsCreated += one.bidsCreated;
        total.events += one.events;
        total.rejected.push(...one.rejected.map((r) => ({ ...r, index })));
      }
      return total;
    }
  }

  /**
   * Replays the parked observations whose context has arrived (a source or reference data loaded,
   * the parent auction stored by another path), without waiting for another observation of
   * their auction: in batches of auctions, until none is ready. Returns what it applied.
   */
  async replayReady(options: ProcessOptions & { batchSize?: number } = {}): Promise<ProcessResult> {
    const total = emptyResult();
    const batchSize = options.batchSize ?? 200;
    let rounds = 0;
    for (;;) {
      const keys = await withTransaction(this.pool, (client) =>
        this.repository.readyPendingKeys(client, batchSize, PendingReasons.ParentMissing),
      );
      if (keys.length === 0) return total;
      const recorded: string[] = [];
      const one = await withTransaction(this.pool, async (client) => {
        recorded.length = 0;
        return this.apply(client, [], options.now ?? (await transactionTime(client)), recorded, keys);
      });
      this.tokens.remember(recorded);
      total.pending += one.pending;
      total.auctionsCreated += one.auctionsCreated;
      total.auctionsUpdated += one.auctionsUpdated;
      total.bidsCreated += one.bidsCreated;
      total.events += one.events;
      // A replayed observation either goes on or is parked again under the reason it still waits
      // for (no longer ready), so each round takes new keys; the cap only bounds one call.
      if (keys.length < batchSize || (rounds += 1) >= MAX_REPLAY_ROUNDS) return total;
    }
  }

  /**
   * Records what became of observations of `ingest --wait` runs (idempotent per message), and
   * forgets runs older than a week now and then.
   */
  async recordIngestOutcomes(outcomes: readonly IngestOutcome[]): Promise<void> {
    if (outcomes.length === 0) return;
    await this.pool.query(
      `INSERT INTO ingest_outcomes (run_id, message_id, outcome)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
       ON CONFLICT (run_id, message_id) DO UPDATE SET outcome = EXCLUDED.outcome, recorded_at = now()`,
      [outcomes.map((o) => o.runId), outcomes.map((o) => o.messageId), outcomes.map((o) => o.outcome)],
    );
    if (Date.now() - this.outcomesPrunedAt > 3_600_000) {
      this.outcomesPrunedAt = Date.now();
      await this.pool.query(`DELETE FROM ingest_outcomes WHERE recorded_at < now() - interval '7 days'`);
    }
  }

  /** How many observations wait in pending_observations, since when and why. */
  async pendingSummary(): Promise<PendingSummary> {
    const client = await this.pool.connect();
    try {
      return await this.repository.pendingSummary(client);
    } finally {
      client.release();
    }
  }

  /**
   * `recorded` receives the description tokens added to the vocabulary (known once committed).
   * `replay` names auctions without a new observation whose parked observations go on now.
   */
  private async apply(
    client: PoolClient,
    observations: Observation[],
    now: Date,
    recorded: string[],
    replay: readonly { source: string; source_auction_id: string }[] = [],
  ): Promise<ProcessResult> {
    const result = emptyResult();
    const groups = new Map<string, Group>();
    const groupOf = (source: string, sourceAuctionId: string): Group => {
      const key = keyOf(source, sourceAuctionId);
      let group = groups.get(key);
      if (!group) {
        group = { key, source, sourceAuctionId, items: [] };
        groups.set(key, group);
      }
      return group;
    };
    observations.forEach((observation, index) =>
      groupOf(observation.source, observation.source_auction_id).items.push({ observation, index, receivedAt: null, bids: [] }),
    );
    for (const key of replay) groupOf(key.source, key.source_auction_id);
    const all = [...groups.values()];
    const sources = all.map((g) => g.source);
    const ids = all.map((g) => g.sourceAuctionId);

    const version = await this.repository.lockKeys(client, all.map((g) => g.key));
    const reference = await this.reference.get(client, version);
    const existing = new Map(
      (await this.repository.findForUpdate(client, sources, ids)).map((row) => [keyOf(row.source, row.source_auction_id), row]),
    );
    // Observations parked earlier for these auctions come first (they were received earlier).
    for (const pending of await this.repository.takePending(client, sources, ids)) {
      const group = groupOf(pending.source, pending.source_auction_id);
      group.items.unshift({ observation: pending.observation as Observation, index: -1, receivedAt: pending.received_at, bids: [] });
    }

    const pending: NewPending[] = [];
    const park = (item: Item, reason: string) => {
      pending.push({
        source: item.observation.source,
        source_auction_id: item.observation.source_auction_id,
        reason,
        observation: item.observation,
        received_at: item.receivedAt,
      });
      if (item.index >= 0) {
        result.accepted += 1;
        result.pendingIndexes.push(item.index);
      }
      result.pending += 1;
    };
    const reject = (item: Item, reason: string) => {
      if (item.index >= 0) result.rejected.push({ index: item.index, reason });
      else this.logger.warn(`dropping a pending observation that can no longer be applied: ${reason}`);
    };

    interface Plan {
      group: Group;
      before: ExistingAuction | undefined;
      final: Item | undefined;
      items: Item[];
    }
    const plans: Plan[] = [];
    for (const group of groups.values()) {
      if (group.items.length === 0) continue; // replayed by another transaction meanwhile
      const source = reference.sources.get(group.source);
      if (!source) {
        for (const item of group.items) park(item, PendingReasons.UnknownSource);
        continue;
      }
      const items: Item[] = [];
      for (const item of group.items) {
        try {
          const auction = item.observation.auction;
          if (auction) {
            const names = reference.normalizer.normalize(auction.make, auction.model);
            item.row = buildAuctionRow(item.observation as Observation & { auction: ObservationAuction }, source, names);
            item.excluded = names.excluded;
          }
          item.bids = (item.observation.bids ?? []).map((bid) => buildBidRow(bid, source));
          items.push(item);
        } catch (error) {
          reject(item, `invalid observation: ${errorMessage(error)}`);
        }
      }
      if (items.length === 0) continue;
      const before = existing.get(group.key);
      // The newest auction state wins; one older than the stored state is stale (bids still count).
      let final: Item | undefined;
      for (const item of items) {
        if (!item.row) continue;
        if (before && item.row.observed_at < before.observed_at) continue;
        if (!final || item.row.observed_at >= final.row!.observed_at) final = item;
      }
      if (!before && !final) {
        for (const item of items) park(item, PendingReasons.ParentMissing);
        continue;
      }
      for (const item of items) if (item.index >= 0) result.accepted += 1;
      plans.push({ group, before, final, items });
    }

    // unique_bidder_count travels with the auction row (a second UPDATE of the row would rewrite
    // every index entry): distinct bidder names stored so far plus those of this batch.
    const storedBidders = await this.repository.bidderNames(
      client,
      plans.filter((p) => p.final && p.before && p.items.some((i) => i.bids.length > 0)).map((p) => p.before!.id),
    );
    const rows = plans
      .filter((p) => p.final)
      .map((p) => {
        const names = new Set(p.before ? storedBidders.get(p.before.id) ?? [] : []);
        for (const item of p.items) for (const b of item.bids) if (b.bidder_name != null) names.add(b.bidder_name);
        const any = p.items.some((i) => i.bids.length > 0) || storedBidders.has(p.before?.id ?? '');
        return { ...p.final!.row!, unique_bidder_count: any ? names.size : null };
      });
    // Keyword search needs every description token in the vocabulary; only the unknown ones travel.
    const tokens = this.tokens.unknown(rows.map((row) => row.description));
    await this.repository.recordDescriptionTokens(client, tokens);
    recorded.push(...tokens);
    const written = await this.repository.upsertAuctions(client, rows);
    const writtenIds = new Map(written.map((w) => [keyOf(w.source, w.source_auction_id), w]));

    // Decide the auction events; collect the bids of every plan.
    interface Parent {
      auctionId: string;
      eligible: boolean;
      make: string | null;
      /** The listed make while the canonical one is unknown. */
      listedMake: string | null;
      source: string;
    }
    const parents = new Map<string, Parent>();
    const eventsByGroup = new Map<string, OutboxInsert[]>();
    const bids: (BidRow & { auction_id: string })[] = [];
    for (const plan of plans) {
      const auctionId = plan.before?.id ?? writtenIds.get(plan.group.key)!.id;
      const events: OutboxInsert[] = [];
      let eligible: boolean;
      let make: string | null;
      let listedMake: string | null;
      if (plan.final) {
        const row = plan.final.row!;
        eligible = isEligible(row, plan.final.excluded);
        make = row.ocd_make_name;
        listedMake = make === null ? row.listing_make : null;
        const after: EventAuction = eventAuction(auctionId, row);
        const decision = decideAuctionEvent(plan.before ? meaningfulState(plan.before) : null, meaningfulState(after));
        if (plan.before === undefined) result.auctionsCreated += 1;
        else if (decision) result.auctionsUpdated += 1;
        if (decision && eligible) {
          const envelope = buildEventEnvelope(decision.type, { auction: after, changes: decision.changes }, now);
          events.push(this.outboxRow(envelope, { auctionId, make, listedMake, source: row.source }));
        }
      } else {
        const before = plan.before!;
        const names = reference.normalizer.normalize(before.make, before.model);
        eligible = isEligible(before, names.excluded);
        make = before.ocd_make_name;
        listedMake = make === null ? before.make : null;
      }
      parents.set(plan.group.key, { auctionId, eligible, make, listedMake, source: plan.group.source });
      eventsByGroup.set(plan.group.key, events);
      const unique = new Map<string, BidRow>();
      for (const item of plan.items) for (const bid of item.bids) unique.set(bid.source_bid_id, bid);
      for (const bid of unique.values()) bids.push({ ...bid, auction_id: auctionId });
    }

    const inserted = await this.repository.insertBids(client, bids);
    const insertedKeys = new Set(inserted.map((b) => bidKey(b)));
    await this.repository.updateBids(
      client,
      bids.filter((b) => !insertedKeys.has(bidKey(b))),
    );
    const byBidKey = new Map(bids.map((b) => [bidKey(b), b]));
    const insertedRows = inserted.map((b) => ({ ...b, source: byBidKey.get(bidKey(b))!.source }));
    const firstSeen = await this.repository.registerIdentities(client, insertedRows, now);
    const parentById = new Map([...parents.entries()].map(([key, parent]) => [parent.auctionId, { key, parent }]));
    for (const bid of insertedRows) {
      if (!firstSeen.has(identityKey(bid))) continue;
      result.bidsCreated += 1;
      const owner = parentById.get(bid.auction_id)!;
      if (!owner.parent.eligible) continue;
      const row = byBidKey.get(bidKey(bid))!;
      const envelope = buildEventEnvelope(
        EventTypes.BidCreated,
        { bid: { id: bid.id, auction_id: bid.auction_id, amount: row.amount, currency: row.currency, bid_at: row.bid_at_local } },
        now,
      );
      eventsByGroup.get(owner.key)!.push(this.outboxRow(envelope, owner.parent));
    }
    // Auctions that got new bids without a row write of their own (bids-only or stale observations).
    const rewritten = new Set(plans.filter((p) => p.final).map((p) => parents.get(p.group.key)!.auctionId));
    await this.repository.refreshBidderCounts(client, [...new Set(inserted.map((b) => b.auction_id))].filter((id) => !rewritten.has(id)));

    const events = plans.flatMap((plan) => eventsByGroup.get(plan.group.key) ?? []);
    await this.repository.insertEvents(client, events);
    await this.repository.insertPending(client, pending);
    result.events = events.length;
    return result;
  }

  private outboxRow(
    envelope: { id: string; type: string; api_version: string; created_at: string },
    routing: { auctionId: string; make: string | null; listedMake: string | null; source: string },
  ): OutboxInsert {
    return {
      id: envelope.id,
      type: envelope.type,
      api_version: envelope.api_version,
      created_at: envelope.created_at,
      payload: envelope,
      auction_id: routing.auctionId,
      make: routing.make,
      source: routing.source,
      listed_make: routing.listedMake,
    };
  }

  /** The cached reference data (for the bulk loader and tests). */
  async referenceSnapshot(): Promise<ReferenceSnapshot> {
    const client = await this.pool.connect();
    try {
      return await this.reference.get(client);
    } finally {
      client.release();
    }
  }
}

/** The database clock for this transaction (`now()` is the transaction's start time). */
async function transactionTime(client: PoolClient): Promise<Date> {
  const { rows } = await client.query<{ now: Date }>('SELECT now() AS now');
  return rows[0].now;
}
