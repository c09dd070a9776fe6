import { AuctionEventData, BidEventData, buildEventEnvelope, EventTypes } from '@cars/contracts';
import type { Normalizer } from '../normalization/normalizer';
import { BidRow, eventAuction } from './auction-row';
import type { AuctionPlan } from './batch-planner';
import { AuctionEventType, decideAuctionEvent, isEligible, meaningfulState } from './decisions';
import { bidKey, identityKey } from './keys';
import type { InsertedBid, OutboxInsert } from './observation.repository';

/**
 * The events of a batch (docs/api/ingestion.md, "Emission decisions"), decided from the plans, the
 * stored ids and what the bid insert reported (pure; decisions.ts holds the rules themselves).
 * Events are drafts until `outboxRows` gives each its envelope.
 */

/** The routing context of an auction's events and of its bids' events. */
export interface EventParent {
  auctionId: string;
  eligible: boolean;
  make: string | null;
  /** The listed make while the canonical one is unknown. */
  listedMake: string | null;
  source: string;
}

export type EventDraft =
  | { type: AuctionEventType; data: AuctionEventData; parent: EventParent }
  | { type: typeof EventTypes.BidCreated; data: BidEventData; parent: EventParent };

/** What became of one planned auction. */
export interface AuctionOutcome {
  parent: EventParent;
  created: boolean;
  /** A meaningful change of a stored auction (whether or not its event may be emitted). */
  updated: boolean;
  /** Its auction event, when one is due and the auction is eligible. */
  event: EventDraft | null;
}

/**
 * The auction event of a plan (none without a final state), and the routing context of its
 * bids. Without a final state the stored row decides eligibility, its listed make normalized
 * with the current tables.
 */
export function decideAuction(plan: AuctionPlan, auctionId: string, normalizer: Pick<Normalizer, 'normalize'>): AuctionOutcome {
  const row = plan.final?.row;
  if (!row) {
    const before = plan.before;
    if (!before) throw new Error(`auction ${plan.group.key} has neither a stored nor a new state`);
    const make = before.ocd_make_name;
    const parent: EventParent = {
      auctionId,
      eligible: isEligible(before, normalizer.normalize(before.make, before.model).excluded),
      make,
      listedMake: make === null ? before.make : null,
      source: plan.group.source,
    };
    return { parent, created: false, updated: false, event: null };
  }
  const make = row.ocd_make_name;
  const parent: EventParent = {
    auctionId,
    eligible: isEligible(row, plan.final?.excluded),
    make,
    listedMake: make === null ? row.listing_make : null,
    source: plan.group.source,
  };
  const after = eventAuction(auctionId, row);
  const decision = decideAuctionEvent(plan.before ? meaningfulState(plan.before) : null, meaningfulState(after));
  return {
    parent,
    created: plan.before === undefined,
    updated: plan.before !== undefined && decision !== null,
    event: decision && parent.eligible ? { type: decision.type, data: { auction: after, changes: decision.changes }, parent } : null,
  };
}

/**
 * `bid.created` for each inserted bid whose identity is seen for the first time ever, when its
 * auction is eligible; `bidsCreated` counts the first-seen ones, eligible or not.
 */
export function decideBidEvents(
  inserted: readonly InsertedBid[],
  firstSeen: ReadonlySet<string>,
  written: readonly (BidRow & { auction_id: string })[],
  parents: ReadonlyMap<string, EventParent>,
): { bidsCreated: number; events: EventDraft[] } {
  const byBidKey = new Map(written.map((b) => [bidKey(b), b]));
  const events: EventDraft[] = [];
  let bidsCreated = 0;
  for (const bid of inserted) {
    if (!firstSeen.has(identityKey(bid))) continue;
    bidsCreated += 1;
    const parent = parents.get(bid.auction_id);
    const row = byBidKey.get(bidKey(bid));
    if (!parent || !row) throw new Error(`bid ${bid.source_bid_id} was not written by this batch`);
    if (!parent.eligible) continue;
    events.push({
      type: EventTypes.BidCreated,
      data: { bid: { id: bid.id, auction_id: bid.auction_id, amount: row.amount, currency: row.currency, bid_at: row.bid_at_local } },
      parent,
    });
  }
  return { bidsCreated, events };
}

/**
 * The batch's events in outbox order: auction by auction (in plan order), its auction event
 * first, then its bids' events.
 */
export function orderEvents(auctionEvents: readonly (EventDraft | null)[], bidEvents: readonly EventDraft[], auctionIds: readonly string[]): EventDraft[] {
  const byAuction = new Map<string, EventDraft[]>();
  for (const event of bidEvents) {
    const list = byAuction.get(event.parent.auctionId) ?? [];
    list.push(event);
    byAuction.set(event.parent.auctionId, list);
  }
  return auctionIds.flatMap((id, i) => {
    const auctionEvent = auctionEvents[i];
    const bids = byAuction.get(id) ?? [];
    return auctionEvent ? [auctionEvent, ...bids] : bids;
  });
}

/** The outbox rows of the drafts, each with a new envelope observed at `now`. */
export function outboxRows(drafts: readonly EventDraft[], now: Date): OutboxInsert[] {
  return drafts.map((draft) => {
    // One call per member of the union, so each pairing of type and data is checked.
    const envelope =
      draft.type === EventTypes.BidCreated
        ? buildEventEnvelope(draft.type, draft.data, now)
        : buildEventEnvelope(draft.type, draft.data, now);
    return {
      id: envelope.id,
      type: envelope.type,
      api_version: envelope.api_version,
      created_at: envelope.created_at,
      payload: envelope,
      auction_id: draft.parent.auctionId,
      make: draft.parent.make,
      source: draft.parent.source,
      listed_make: draft.parent.listedMake,
    };
  });
}
