import {
  AUCTION_ENDING_STATUSES,
  AUCTION_STARTING_STATUSES,
  AuctionChanges,
  EventAuction,
  EventTypes,
  FieldChange,
  MEANINGFUL_AUCTION_FIELDS,
  MeaningfulAuctionField,
} from '@cars/contracts';

/**
 * The event decisions (docs/api/ingestion.md, "Emission decisions"), as pure functions of the state
 * at the start of a transaction and the state it commits (never of the intermediate states).
 */
export type MeaningfulState = Pick<EventAuction, MeaningfulAuctionField>;

export type AuctionEventType =
  | typeof EventTypes.AuctionCreated
  | typeof EventTypes.AuctionUpdated
  | typeof EventTypes.AuctionEnded;

export interface AuctionDecision {
  type: AuctionEventType;
  changes: AuctionChanges;
}

/** Parents ending before this date are ineligible for events (their bids too). */
export const ELIGIBILITY_CUTOFF_DATE = '2016-01-01';

export function meaningfulState(auction: EventAuction): MeaningfulState {
  const state = {} as Record<MeaningfulAuctionField, unknown>;
  for (const field of MEANINGFUL_AUCTION_FIELDS) state[field] = auction[field];
  return state as MeaningfulState;
}

/** Changed meaningful fields, `{before, after}` each (views, watchers, comments, scrape times never count). */
export function meaningfulChanges(before: MeaningfulState, after: MeaningfulState): AuctionChanges {
  const changes: Record<string, FieldChange<unknown>> = {};
  for (const field of MEANINGFUL_AUCTION_FIELDS) {
    const a = before[field] ?? null;
    const b = after[field] ?? null;
    if (a !== b) changes[field] = { before: a, after: b };
  }
  return changes as AuctionChanges;
}

const normalizeStatus = (status: string | null) => (status ?? '').trim().toLowerCase();

export function isStartingStatus(status: string | null): boolean {
  return (AUCTION_STARTING_STATUSES as readonly string[]).includes(normalizeStatus(status));
}

export function isEndingStatus(status: string | null): boolean {
  return (AUCTION_ENDING_STATUSES as readonly string[]).includes(normalizeStatus(status));
}

/**
 * The auction event of one transaction: `auction.created` (empty changes) for a new row;
 * `auction.ended` instead of `auction.updated` when the status moves from a starting to an ending
 * state; `auction.updated` for any other meaningful change; nothing when initial and final
 * meaningful states are equal (a change reverted within the transaction included).
 */
export function decideAuctionEvent(initial: MeaningfulState | null, final: MeaningfulState): AuctionDecision | null {
  if (initial === null) return { type: EventTypes.AuctionCreated, changes: {} };
  const changes = meaningfulChanges(initial, final);
  if (Object.keys(changes).length === 0) return null;
  if (changes.status && isStartingStatus(initial.status) && isEndingStatus(final.status)) {
    return { type: EventTypes.AuctionEnded, changes };
  }
  return { type: EventTypes.AuctionUpdated, changes };
}

/**
 * Whether an auction's events (and its bids' events) may be emitted: not when it ended before
 * 2016, nor when its listed make is a confirmed exclusion. An auction without a known end is
 * eligible.
 */
export function isEligible(auction: { auction_end_date: string | null; auction_end_at?: string | null }, excluded = false): boolean {
  if (excluded) return false;
  const end = auction.auction_end_date ?? auction.auction_end_at?.slice(0, 10) ?? null;
  return end === null || end >= ELIGIBILITY_CUTOFF_DATE;
}
