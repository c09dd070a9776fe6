import { errorMessage, Observation, ObservationAuction } from '@cars/contracts';
import type { Normalizer } from '../normalization/normalizer';
import type { SourceContext } from '../normalization/source-context';
import { AuctionRow, BidRow, buildAuctionRow, buildBidRow } from './auction-row';
import { auctionKey, bidKey } from './keys';
import type { ExistingAuction, InsertedBid, NewPending } from './observation.repository';

/**
 * How a batch is applied, decided before anything is written (pure): observations grouped by
 * source auction, rows built, each group either planned (applied in this transaction) or parked
 * until its context arrives, and the newest auction state of each planned group chosen.
 */

export const PendingReasons = {
  ParentMissing: 'parent auction not stored',
  UnknownSource: 'unknown source',
} as const;

export interface BatchItem {
  observation: Observation;
  /** Position in the batch, or -1 for an observation replayed from pending_observations. */
  index: number;
  receivedAt: string | null;
  row?: AuctionRow;
  excluded?: boolean;
  bids: BidRow[];
}

export interface AuctionGroup {
  /** `auctionKey` of the source auction (also its advisory lock). */
  key: string;
  source: string;
  sourceAuctionId: string;
  items: BatchItem[];
}

/** A group applied in this transaction. */
export interface AuctionPlan {
  group: AuctionGroup;
  /** The stored state at the start of the transaction. */
  before: ExistingAuction | undefined;
  /** The item whose auction state is written; none when every one is stale or bids-only. */
  final: BatchItem | undefined;
  items: BatchItem[];
}

/** A parked observation as the repository stores it. */
export interface ParkedObservation {
  source: string;
  source_auction_id: string;
  observation: unknown;
  received_at: string | null;
}

export interface BatchPlan {
  plans: AuctionPlan[];
  /** Observations to park in pending_observations, in order. */
  pending: NewPending[];
  /** Positions in the batch of the parked observations. */
  pendingIndexes: number[];
  /** Observations of the batch applied or parked. */
  accepted: number;
  /** Observations of the batch that cannot be applied, with why. */
  rejected: { index: number; reason: string }[];
  /** Why replayed observations that can no longer be applied are dropped. */
  dropped: string[];
}

/** What the planner needs of the reference data. */
export interface PlanningReference {
  sources: ReadonlyMap<string, SourceContext>;
  normalizer: Pick<Normalizer, 'normalize'>;
}

/**
 * The batch's observations grouped by source auction (groups and their items in batch order),
 * plus an empty group for each auction whose parked observations are replayed.
 */
export function groupByAuction(
  observations: readonly Observation[],
  replay: readonly { source: string; source_auction_id: string }[] = [],
): Map<string, AuctionGroup> {
  const groups = new Map<string, AuctionGroup>();
  observations.forEach((observation, index) =>
    groupOf(groups, observation.source, observation.source_auction_id).items.push({ observation, index, receivedAt: null, bids: [] }),
  );
  for (const key of replay) groupOf(groups, key.source, key.source_auction_id);
  return groups;
}

/**
 * Puts the observations parked earlier for these auctions in front of their group's (they were
 * received earlier). `parked` comes oldest first; each is put in front of the group as it comes.
 */
export function withParked(groups: Map<string, AuctionGroup>, parked: readonly ParkedObservation[]): Map<string, AuctionGroup> {
  for (const pending of parked) {
    groupOf(groups, pending.source, pending.source_auction_id).items.unshift({
      observation: pending.observation as Observation,
      index: -1,
      receivedAt: pending.received_at,
      bids: [],
    });
  }
  return groups;
}

function groupOf(groups: Map<string, AuctionGroup>, source: string, sourceAuctionId: string): AuctionGroup {
  const key = auctionKey(source, sourceAuctionId);
  let group = groups.get(key);
  if (!group) {
    group = { key, source, sourceAuctionId, items: [] };
    groups.set(key, group);
  }
  return group;
}

/**
 * Decides what becomes of each group: a group of an unknown source is parked (`unknown source`);
 * an observation whose rows cannot be built is rejected; a group with neither a stored auction
 * nor an auction state to write is parked (`parent auction not stored`); any other group is
 * planned, its newest auction state not older than the stored one being the final one (an older
 * state is stale; its bids still count).
 */
export function planBatch(
  groups: Iterable<AuctionGroup>,
  existing: ReadonlyMap<string, ExistingAuction>,
  reference: PlanningReference,
): BatchPlan {
  const batch: BatchPlan = { plans: [], pending: [], pendingIndexes: [], accepted: 0, rejected: [], dropped: [] };
  const park = (item: BatchItem, reason: string) => {
    batch.pending.push({
      source: item.observation.source,
      source_auction_id: item.observation.source_auction_id,
      reason,
      observation: item.observation,
      received_at: item.receivedAt,
    });
    if (item.index >= 0) {
      batch.accepted += 1;
      batch.pendingIndexes.push(item.index);
    }
  };
  for (const group of groups) {
    if (group.items.length === 0) continue; // replayed by another transaction meanwhile
    const source = reference.sources.get(group.source);
    if (!source) {
      for (const item of group.items) park(item, PendingReasons.UnknownSource);
      continue;
    }
    const items: BatchItem[] = [];
    for (const item of group.items) {
      try {
        withRows(item, source, reference.normalizer);
        items.push(item);
      } catch (error) {
        const reason = `invalid observation: ${errorMessage(error)}`;
        if (item.index >= 0) batch.rejected.push({ index: item.index, reason });
        else batch.dropped.push(reason);
      }
    }
    if (items.length === 0) continue;
    const before = existing.get(group.key);
    const final = newestState(items, before);
    if (!before && !final) {
      for (const item of items) park(item, PendingReasons.ParentMissing);
      continue;
    }
    batch.accepted += items.filter((item) => item.index >= 0).length;
    batch.plans.push({ group, before, final, items });
  }
  return batch;
}

/** Builds the item's auction row (when it has an auction part) and bid rows. Throws on impossible values. */
function withRows(item: BatchItem, source: SourceContext, normalizer: PlanningReference['normalizer']): void {
  const auction = item.observation.auction;
  if (auction) {
    const names = normalizer.normalize(auction.make, auction.model);
    item.row = buildAuctionRow(item.observation as Observation & { auction: ObservationAuction }, source, names);
    item.excluded = names.excluded;
  }
  item.bids = (item.observation.bids ?? []).map((bid) => buildBidRow(bid, source));
}

/** The newest auction state (the later of equals), ignoring states older than the stored one. */
export function newestState(items: readonly BatchItem[], before: Pick<ExistingAuction, 'observed_at'> | undefined): BatchItem | undefined {
  let final: (BatchItem & { row: AuctionRow }) | undefined;
  for (const item of items) {
    if (!item.row) continue;
    if (before && item.row.observed_at < before.observed_at) continue;
    if (!final || item.row.observed_at >= final.row.observed_at) final = item as BatchItem & { row: AuctionRow };
  }
  return final;
}

/**
 * Stored auctions whose bidder count needs their stored bidder names: rewritten ones that get
 * bids in this batch.
 */
export function auctionsNeedingBidders(plans: readonly AuctionPlan[]): string[] {
  return plans
    .filter((p) => p.final && p.before && p.items.some((i) => i.bids.length > 0))
    .map((p) => (p.before as ExistingAuction).id);
}

/**
 * The auction rows to write, one per plan with a final state. `unique_bidder_count` travels with
 * the row (a second UPDATE of the row would rewrite every index entry): distinct bidder names
 * stored so far plus those of this batch; null for an auction that has no bids at all.
 */
export function auctionRowsToWrite(
  plans: readonly AuctionPlan[],
  storedBidders: ReadonlyMap<string, readonly string[]>,
): (AuctionRow & { unique_bidder_count: number | null })[] {
  return plans.flatMap((p) => {
    if (!p.final?.row) return [];
    const stored = p.before ? storedBidders.get(p.before.id) : undefined;
    const names = new Set(stored ?? []);
    for (const item of p.items) for (const b of item.bids) if (b.bidder_name != null) names.add(b.bidder_name);
    const any = p.items.some((i) => i.bids.length > 0) || stored !== undefined;
    return [{ ...p.final.row, unique_bidder_count: any ? names.size : null }];
  });
}

/** The bids of the plans under their stored auction (`auctionIds`, in plan order): once per source id per auction, with its latest values. */
export function bidsToWrite(plans: readonly AuctionPlan[], auctionIds: readonly string[]): (BidRow & { auction_id: string })[] {
  return plans.flatMap((plan, i) => {
    const unique = new Map<string, BidRow>();
    for (const item of plan.items) for (const bid of item.bids) unique.set(bid.source_bid_id, bid);
    return [...unique.values()].map((bid) => ({ ...bid, auction_id: auctionIds[i] }));
  });
}

/** The bids the insert left alone (already stored): their fields are updated when the source changed them. */
export function storedBids<B extends { source_bid_id: string; auction_id: string }>(bids: readonly B[], inserted: readonly InsertedBid[]): B[] {
  const insertedKeys = new Set(inserted.map(bidKey));
  return bids.filter((b) => !insertedKeys.has(bidKey(b)));
}

/**
 * Auctions whose bidder count is recounted: those that got new bids without a row write of
 * their own (bids-only or stale observations); a rewritten row carries its count.
 */
export function auctionsToRecount(plans: readonly AuctionPlan[], auctionIds: readonly string[], inserted: readonly InsertedBid[]): string[] {
  const rewritten = new Set(auctionIds.filter((_, i) => plans[i].final));
  return [...new Set(inserted.map((b) => b.auction_id))].filter((id) => !rewritten.has(id));
}
