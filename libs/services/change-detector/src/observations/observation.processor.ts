import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { errorMessage, Observation } from '@cars/contracts';
import { PG_POOL } from '@cars/persistence';
import { Pool, PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { isObservationError, poolOf } from '../database/pg';
import { ReferenceCache, ReferenceSnapshot } from '../normalization/reference-cache';
import {
  auctionRowsToWrite,
  auctionsNeedingBidders,
  auctionsToRecount,
  bidsToWrite,
  groupByAuction,
  PendingReasons,
  planBatch,
  storedBids,
  withParked,
} from './batch-planner';
import { KnownDescriptionTokens } from './description-tokens';
import { decideAuction, decideBidEvents, orderEvents, outboxRows } from './event-decider';
import { auctionKey } from './keys';
import { ObservationRepository, PendingSummary } from './observation.repository';

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

export { PendingReasons };
export { parseObservation } from './observation-validator';

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

/**
 * Applies observations to the database in ONE transaction per batch (docs/api/ingestion.md): locks
 * the source auctions, normalizes make/model, upserts auction rows, inserts new bids and their
 * identities, decides the events from the state before and after the whole batch, and writes them
 * to the `events` outbox. Used by the RabbitMQ consumer, the quick start's ingestion entry point
 * and tests alike.
 */
@Injectable()
export class ObservationProcessor {
  private readonly logger = new Logger(ObservationProcessor.name);
  private readonly pool: Pool;
  private readonly repository: ObservationRepository;
  private readonly reference: ReferenceCache;
  private readonly tokens: KnownDescriptionTokens;
  private outcomesPrunedAt = 0;

  /**
   * In the module the parts are injected; outside it (tools, tests) `new ObservationProcessor(db)`
   * builds its own over the pool of `db`.
   */
  constructor(
    @Inject(PG_POOL) database: Pool | DataSource,
    @Optional() repository?: ObservationRepository,
    @Optional() reference?: ReferenceCache,
    @Optional() tokens?: KnownDescriptionTokens,
  ) {
    this.pool = poolOf(database);
    this.repository = repository ?? new ObservationRepository(this.pool);
    this.reference = reference ?? new ReferenceCache();
    this.tokens = tokens ?? new KnownDescriptionTokens();
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
      const result = await this.repository.transaction(async (client) => {
        recorded.length = 0; // a retried transaction starts over
        return this.apply(client, observations, now, recorded);
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
      const keys = await this.repository.transaction((client) =>
        this.repository.readyPendingKeys(client, batchSize, PendingReasons.ParentMissing),
      );
      if (keys.length === 0) return total;
      const recorded: string[] = [];
      const one = await this.repository.transaction(async (client) => {
        recorded.length = 0;
        return this.apply(client, [], options.now, recorded, keys);
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
  pendingSummary(): Promise<PendingSummary> {
    return this.repository.pendingSummary();
  }

  /**
   * One batch in its transaction: lock and read the auctions, plan the batch, write the rows,
   * decide the events, write them and the observations that wait. `now` defaults to the
   * transaction's database clock; `recorded` receives the description tokens added to the
   * vocabulary (known once committed); `replay` names auctions without a new observation whose
   * parked observations go on now.
   */
  private async apply(
    client: PoolClient,
    observations: Observation[],
    observedAt: Date | undefined,
    recorded: string[],
    replay: readonly { source: string; source_auction_id: string }[] = [],
  ): Promise<ProcessResult> {
    const grouped = groupByAuction(observations, replay);
    const groups = [...grouped.values()];
    const sources = groups.map((g) => g.source);
    const ids = groups.map((g) => g.sourceAuctionId);
    const { version, now: transactionTime } = await this.repository.lockKeys(client, groups.map((g) => g.key));
    const now = observedAt ?? transactionTime;
    // Right after lockKeys, which set the planner for it (see findAndTakePending).
    const { stored, parked } = await this.repository.findAndTakePending(client, sources, ids);
    const reference = await this.reference.get(client, version);
    const existing = new Map(stored.map((row) => [auctionKey(row.source, row.source_auction_id), row]));
    const batch = planBatch(withParked(grouped, parked).values(), existing, reference);
    for (const reason of batch.dropped) this.logger.warn(`dropping a pending observation that can no longer be applied: ${reason}`);

    const storedBidders = await this.repository.bidderNames(client, auctionsNeedingBidders(batch.plans));
    const rows = auctionRowsToWrite(batch.plans, storedBidders);
    // Keyword search needs every description token in the vocabulary; only the unknown ones travel.
    const tokens = this.tokens.unknown(rows.map((row) => row.description));
    await this.repository.recordDescriptionTokens(client, tokens);
    recorded.push(...tokens);
    const written = await this.repository.upsertAuctions(client, rows);
    const writtenIds = new Map(written.map((w) => [auctionKey(w.source, w.source_auction_id), w.id]));
    const auctionIds = batch.plans.map((plan) => plan.before?.id ?? required(writtenIds.get(plan.group.key), plan.group.key));
    const auctions = batch.plans.map((plan, i) => decideAuction(plan, auctionIds[i], reference.normalizer));

    const bids = bidsToWrite(batch.plans, auctionIds);
    const inserted = await this.repository.insertBids(client, bids);
    await this.repository.updateBids(client, storedBids(bids, inserted));
    const firstSeen = await this.repository.registerIdentities(client, inserted, now);
    const bidEvents = decideBidEvents(inserted, firstSeen, bids, new Map(auctions.map((a) => [a.parent.auctionId, a.parent])));
    await this.repository.refreshBidderCounts(client, auctionsToRecount(batch.plans, auctionIds, inserted));

    const events = outboxRows(orderEvents(auctions.map((a) => a.event), bidEvents.events, auctionIds), now);
    await this.repository.insertEvents(client, events);
    await this.repository.insertPending(client, batch.pending);
    return {
      accepted: batch.accepted,
      rejected: batch.rejected,
      pending: batch.pending.length,
      pendingIndexes: batch.pendingIndexes,
      auctionsCreated: auctions.filter((a) => a.created).length,
      auctionsUpdated: auctions.filter((a) => a.updated).length,
      bidsCreated: bidEvents.bidsCreated,
      events: events.length,
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

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`${what} was not written`);
  return value;
}
