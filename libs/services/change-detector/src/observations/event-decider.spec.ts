import { AuctionEventData, EventTypes, Observation } from '@cars/contracts';
import { Normalizer } from '../normalization/normalizer';
import type { SourceContext } from '../normalization/source-context';
import { AuctionPlan, bidsToWrite, groupByAuction, planBatch, PlanningReference } from './batch-planner';
import { decideAuction, decideBidEvents, EventDraft, EventParent, orderEvents, outboxRows } from './event-decider';
import { auctionKey, identityKey } from './keys';
import { ExistingAuction } from './observation.repository';

const bat: SourceContext = { id: 'bringatrailer', timezone: 'America/Los_Angeles', unsoldReportsHighBidOnly: true, defaultCurrency: 'USD' };
const normalizer = new Normalizer({
  makes: [{ id: 1, name: 'Porsche' }],
  makeAliases: [{ alias: 'replica co', makeId: null, excluded: true }],
  models: [],
  modelAliases: [],
});
const reference: PlanningReference = { sources: new Map([[bat.id, bat]]), normalizer };

type AuctionPart = NonNullable<Observation['auction']>;
const base: AuctionPart = { status: 'active', make: 'Porsche', model: '911', price: 100, currency: 'USD', auction_end_at: '2026-11-25T19:00:00' };
const bid = (id: string, amount = 100) => ({ source_bid_id: id, bidder_name: 'ann', amount, currency: 'USD', bid_at: '2026-11-21T10:00:00' });

const stored = (over: Partial<ExistingAuction> = {}): ExistingAuction => ({
  id: '7',
  source: 'bringatrailer',
  source_auction_id: 'a',
  url: null,
  title: null,
  status: 'active',
  price: 100,
  currency: 'USD',
  year: null,
  make: 'Porsche',
  model: '911',
  auction_end_at: '2026-11-25T19:00:00',
  auction_end_date: '2026-11-25',
  bid_count: null,
  sale_type: null,
  price_type: null,
  observed_at: '2026-11-21T12:00:00.000Z',
  ocd_make_name: 'Porsche',
  ...over,
});

/** The plans of one batch: observations of auction `a` (and others by id), over what is stored. */
function plansOf(observations: { id?: string; minute: number; auction?: Partial<AuctionPart> | null; bids?: ReturnType<typeof bid>[] }[], existing: ExistingAuction[] = []): AuctionPlan[] {
  const batch: Observation[] = observations.map((o) => ({
    source: 'bringatrailer',
    source_auction_id: o.id ?? 'a',
    observed_at: `2026-11-21T12:${String(o.minute).padStart(2, '0')}:00.000Z`,
    ...(o.auction === null ? {} : { auction: { ...base, ...o.auction } }),
    bids: o.bids ?? [],
  }));
  const byKey = new Map(existing.map((e) => [auctionKey(e.source, e.source_auction_id), e]));
  return planBatch(groupByAuction(batch).values(), byKey, reference).plans;
}

describe('decideAuction (emission decisions)', () => {
  it.each([
    { name: 'a new auction → auction.created', existing: [], auction: {}, type: EventTypes.AuctionCreated, created: true, updated: false },
    { name: 'a meaningful change → auction.updated', existing: [stored()], auction: { price: 120 }, type: EventTypes.AuctionUpdated, created: false, updated: true },
    { name: 'starting → ending status → auction.ended', existing: [stored()], auction: { status: 'sold' }, type: EventTypes.AuctionEnded, created: false, updated: true },
    { name: 'no meaningful change → nothing', existing: [stored()], auction: { views: 50 }, type: null, created: false, updated: false },
    { name: 'ended before 2016 → counted, no event', existing: [], auction: { auction_end_at: '2015-06-01T10:00:00' }, type: null, created: true, updated: false },
    { name: 'an excluded make → counted, no event', existing: [stored()], auction: { make: 'Replica Co', price: 5 }, type: null, created: false, updated: true },
  ])('$name', ({ existing, auction, type, created, updated }) => {
    const [plan] = plansOf([{ minute: 5, auction }], existing);
    const outcome = decideAuction(plan, '7', normalizer);
    expect(outcome.event?.type ?? null).toBe(type);
    expect({ created: outcome.created, updated: outcome.updated }).toEqual({ created, updated });
  });

  it('carries the change set and the auction as it is now', () => {
    const [plan] = plansOf([{ minute: 5, auction: { price: 120 } }], [stored()]);
    const event = decideAuction(plan, '7', normalizer).event as Extract<EventDraft, { data: AuctionEventData }>;
    expect(event.data.changes).toEqual({ price: { before: 100, after: 120 } });
    expect(event.data.auction).toMatchObject({ id: '7', price: 120, make: 'Porsche' });
  });

  it.each([
    { name: 'a known make routes by it', auction: {}, make: 'Porsche', listedMake: null },
    { name: 'an unknown make routes by the listed spelling', auction: { make: 'Porsch' }, make: null, listedMake: 'Porsch' },
  ])('$name', ({ auction, make, listedMake }) => {
    const [plan] = plansOf([{ minute: 5, auction }]);
    expect(decideAuction(plan, '9', normalizer).parent).toEqual({ auctionId: '9', eligible: true, make, listedMake, source: 'bringatrailer' });
  });

  it.each([
    { name: 'a stale state: the stored row decides eligibility', existing: stored(), eligible: true },
    { name: 'a stored pre-2016 auction is ineligible', existing: stored({ auction_end_date: '2015-01-01' }), eligible: false },
    { name: 'a stored auction under an excluded make is ineligible', existing: stored({ make: 'Replica Co', ocd_make_name: null }), eligible: false },
  ])('$name', ({ existing, eligible }) => {
    const [plan] = plansOf([{ minute: 0, auction: { price: 1 }, bids: [bid('x')] }], [{ ...existing, observed_at: '2026-11-21T12:30:00.000Z' }]);
    expect(plan.final).toBeUndefined();
    const outcome = decideAuction(plan, '7', normalizer);
    expect(outcome).toMatchObject({ event: null, created: false, updated: false, parent: { eligible } });
  });
});

describe('bids', () => {
  const parent = (auctionId: string, eligible = true): EventParent => ({ auctionId, eligible, make: 'Porsche', listedMake: null, source: 'bringatrailer' });

  it.each([
    { name: 'a first-seen bid of an eligible auction → bid.created', firstSeen: true, eligible: true, events: 1, created: 1 },
    { name: 'an identity seen before → nothing', firstSeen: false, eligible: true, events: 0, created: 0 },
    { name: 'a first-seen bid of an ineligible auction → counted, no event', firstSeen: true, eligible: false, events: 0, created: 1 },
  ])('$name', ({ firstSeen, eligible, events, created }) => {
    const written = bidsToWrite(plansOf([{ minute: 1, bids: [bid('x', 120)] }]), ['7']);
    const inserted = [{ id: '900', source: 'bringatrailer', source_bid_id: 'x', auction_id: '7' }];
    const seen = new Set(firstSeen ? inserted.map(identityKey) : []);
    const decided = decideBidEvents(inserted, seen, written, new Map([['7', parent('7', eligible)]]));
    expect(decided.bidsCreated).toBe(created);
    expect(decided.events).toHaveLength(events);
    if (events > 0) {
      expect(decided.events[0].data).toEqual({ bid: { id: '900', auction_id: '7', amount: 120, currency: 'USD', bid_at: '2026-11-21T10:00:00' } });
    }
  });
});

describe('event order and envelopes', () => {
  const draft = (type: EventDraft['type'], auctionId: string): EventDraft =>
    ({ type, data: {}, parent: { auctionId, eligible: true, make: null, listedMake: 'Porsch', source: 'bringatrailer' } }) as unknown as EventDraft;

  it('orders auction by auction: its auction event, then its bids', () => {
    const ordered = orderEvents(
      [draft(EventTypes.AuctionCreated, '1'), null, draft(EventTypes.AuctionUpdated, '3')],
      [draft(EventTypes.BidCreated, '3'), draft(EventTypes.BidCreated, '1'), draft(EventTypes.BidCreated, '2')],
      ['1', '2', '3'],
    );
    expect(ordered.map((e) => `${e.type}@${e.parent.auctionId}`)).toEqual([
      'auction.created@1',
      'bid.created@1',
      'bid.created@2',
      'auction.updated@3',
      'bid.created@3',
    ]);
  });

  it('gives each event its envelope and routing columns', () => {
    const now = new Date('2026-11-21T12:00:00Z');
    const [row] = outboxRows([draft(EventTypes.BidCreated, '4')], now);
    expect(row).toMatchObject({ type: 'bid.created', created_at: now.toISOString(), auction_id: '4', make: null, listed_make: 'Porsch', source: 'bringatrailer' });
    expect(row.payload).toMatchObject({ id: row.id, type: 'bid.created', created_at: now.toISOString() });
  });
});
