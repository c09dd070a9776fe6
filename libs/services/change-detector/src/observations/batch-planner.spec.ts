import { Observation } from '@cars/contracts';
import { Normalizer } from '../normalization/normalizer';
import type { SourceContext } from '../normalization/source-context';
import {
  auctionRowsToWrite,
  auctionsNeedingBidders,
  auctionsToRecount,
  bidsToWrite,
  groupByAuction,
  newestState,
  PendingReasons,
  planBatch,
  PlanningReference,
  storedBids,
  withParked,
} from './batch-planner';
import { auctionKey } from './keys';
import { ExistingAuction } from './observation.repository';

const bat: SourceContext = { id: 'bringatrailer', timezone: 'America/Los_Angeles', unsoldReportsHighBidOnly: true, defaultCurrency: 'USD' };
const reference: PlanningReference = {
  sources: new Map([[bat.id, bat]]),
  normalizer: new Normalizer({
    makes: [{ id: 1, name: 'Porsche' }],
    makeAliases: [{ alias: 'replica co', makeId: null, excluded: true }],
    models: [],
    modelAliases: [],
  }),
};

const at = (minute: number) => `2026-11-21T12:${String(minute).padStart(2, '0')}:00.000Z`;
const bid = (id: string, bidder: string | null = 'ann') => ({ source_bid_id: id, bidder_name: bidder, amount: 100, currency: 'USD', bid_at: '2026-11-21T10:00:00' });

/** An observation: `minute` of its observed time, an auction part unless bids-only. */
function obs(id: string, minute: number, options: { bids?: ReturnType<typeof bid>[]; bidsOnly?: boolean; source?: string; end?: string } = {}): Observation {
  return {
    source: options.source ?? 'bringatrailer',
    source_auction_id: id,
    observed_at: at(minute),
    ...(options.bidsOnly ? {} : { auction: { status: 'active', make: 'Porsche', model: '911', price: minute, auction_end_at: options.end ?? '2026-11-25T19:00:00' } }),
    bids: options.bids ?? [],
  };
}

const stored = (id: string, minute: number): ExistingAuction => ({
  id: `db-${id}`,
  source: 'bringatrailer',
  source_auction_id: id,
  url: null,
  title: null,
  status: 'active',
  price: 1,
  currency: 'USD',
  year: null,
  make: 'Porsche',
  model: '911',
  auction_end_at: '2026-11-25T19:00:00',
  auction_end_date: '2026-11-25',
  bid_count: null,
  sale_type: null,
  price_type: null,
  observed_at: at(minute),
  ocd_make_name: 'Porsche',
});

const plan = (observations: Observation[], existing: ExistingAuction[] = []) =>
  planBatch(
    groupByAuction(observations).values(),
    new Map(existing.map((e) => [auctionKey(e.source, e.source_auction_id), e])),
    reference,
  );

describe('groupByAuction', () => {
  it('groups by source auction in batch order, and adds an empty group per replayed auction', () => {
    const groups = groupByAuction([obs('a', 1), obs('b', 2), obs('a', 3)], [{ source: 'bringatrailer', source_auction_id: 'c' }]);
    expect([...groups.values()].map((g) => [g.sourceAuctionId, g.items.map((i) => i.index)])).toEqual([
      ['a', [0, 2]],
      ['b', [1]],
      ['c', []],
    ]);
    expect([...groups.keys()][0]).toBe(auctionKey('bringatrailer', 'a'));
  });

  it('puts parked observations in front of the batch, as replayed ones (index -1)', () => {
    const groups = withParked(groupByAuction([obs('a', 5)]), [
      { source: 'bringatrailer', source_auction_id: 'a', observation: obs('a', 1), received_at: '2026-11-21T11:00:00Z' },
    ]);
    expect(groups.get(auctionKey('bringatrailer', 'a'))?.items.map((i) => [i.index, i.receivedAt])).toEqual([
      [-1, '2026-11-21T11:00:00Z'],
      [0, null],
    ]);
  });
});

describe('planBatch', () => {
  it.each([
    {
      name: 'a new auction is planned, its newest state final',
      observations: [obs('a', 1), obs('a', 3), obs('a', 2)],
      existing: [],
      planned: [{ id: 'a', final: 1, before: false }],
      pending: [],
      accepted: 3,
    },
    {
      name: 'of equal states the later one is final',
      observations: [obs('a', 2), obs('a', 2, { bids: [bid('x')] })],
      existing: [],
      planned: [{ id: 'a', final: 1, before: false }],
      pending: [],
      accepted: 2,
    },
    {
      name: 'a state older than the stored one is stale: planned for its bids, without a final state',
      observations: [obs('a', 1, { bids: [bid('x')] })],
      existing: [stored('a', 5)],
      planned: [{ id: 'a', final: null, before: true }],
      pending: [],
      accepted: 1,
    },
    {
      name: 'a bids-only observation of a stored auction is planned',
      observations: [obs('a', 1, { bidsOnly: true, bids: [bid('x')] })],
      existing: [stored('a', 0)],
      planned: [{ id: 'a', final: null, before: true }],
      pending: [],
      accepted: 1,
    },
    {
      name: 'a bids-only observation without its parent waits for it',
      observations: [obs('a', 1, { bidsOnly: true, bids: [bid('x')] })],
      existing: [],
      planned: [],
      pending: [{ id: 'a', reason: PendingReasons.ParentMissing }],
      accepted: 1,
    },
    {
      name: 'an unknown source waits for reference data',
      observations: [obs('a', 1, { source: 'nosuchsource' }), obs('b', 1)],
      existing: [],
      planned: [{ id: 'b', final: 0, before: false }],
      pending: [{ id: 'a', reason: PendingReasons.UnknownSource }],
      accepted: 2,
    },
  ])('$name', ({ observations, existing, planned, pending, accepted }) => {
    const batch = plan(observations, existing);
    expect(
      batch.plans.map((p) => ({
        id: p.group.sourceAuctionId,
        final: p.final ? p.items.indexOf(p.final) : null,
        before: p.before !== undefined,
      })),
    ).toEqual(planned);
    expect(batch.pending.map((p) => ({ id: p.source_auction_id, reason: p.reason }))).toEqual(pending);
    expect(batch.accepted).toBe(accepted);
    expect(batch.rejected).toEqual([]);
  });

  it('rejects an observation whose rows cannot be built, and plans the rest of its auction', () => {
    const batch = plan([obs('a', 1), obs('a', 2, { end: '2026-02-30T10:00:00' })]);
    expect(batch.rejected).toEqual([{ index: 1, reason: expect.stringContaining('invalid date-time') as unknown }]);
    expect(batch.plans.map((p) => p.items.map((i) => i.index))).toEqual([[0]]);
    expect(batch.accepted).toBe(1);
  });

  it('drops a replayed observation that can no longer be applied (not a rejection of the batch)', () => {
    const groups = withParked(groupByAuction([]), [
      { source: 'bringatrailer', source_auction_id: 'a', observation: obs('a', 1, { end: 'soon' }), received_at: null },
    ]);
    const batch = planBatch(groups.values(), new Map(), reference);
    expect(batch.rejected).toEqual([]);
    expect(batch.dropped).toEqual([expect.stringContaining('invalid date-time') as unknown]);
  });

  it('parks replayed observations again without counting them as accepted', () => {
    const groups = withParked(groupByAuction([obs('a', 3, { bidsOnly: true })]), [
      { source: 'bringatrailer', source_auction_id: 'a', observation: obs('a', 1, { bidsOnly: true }), received_at: '2026-11-21T11:00:00Z' },
    ]);
    const batch = planBatch(groups.values(), new Map(), reference);
    expect(batch.pending.map((p) => p.received_at)).toEqual(['2026-11-21T11:00:00Z', null]);
    expect(batch.pendingIndexes).toEqual([0]);
    expect(batch.accepted).toBe(1);
  });

  it('skips an auction replayed by another transaction meanwhile (no observation left)', () => {
    const batch = planBatch(groupByAuction([], [{ source: 'bringatrailer', source_auction_id: 'gone' }]).values(), new Map(), reference);
    expect(batch).toMatchObject({ plans: [], pending: [], accepted: 0 });
  });

  it('marks the final state of a confirmed exclusion', () => {
    const excluded = { ...obs('a', 1), auction: { status: 'sold', make: 'Replica Co' } };
    expect(plan([excluded]).plans[0].final?.excluded).toBe(true);
  });
});

describe('newestState', () => {
  it.each([
    { minutes: [1, 3, 2], before: undefined, final: 3 },
    { minutes: [2, 2], before: undefined, final: 2 },
    { minutes: [1, 2], before: 2, final: 2 },
    { minutes: [1, 2], before: 3, final: null },
  ])('states $minutes over stored $before → $final', ({ minutes, before, final }) => {
    const batch = plan(minutes.map((m) => obs('a', m)));
    const items = batch.plans[0].items;
    const chosen = newestState(items, before === undefined ? undefined : { observed_at: at(before) });
    expect(chosen ? Number(chosen.row?.price) : null).toBe(final);
  });
});

describe('bidder counts', () => {
  it.each([
    { name: 'a new auction counts the batch bidders', existing: [], stored: {}, bids: [bid('1', 'ann'), bid('2', 'bob'), bid('3', 'ann')], count: 2 },
    { name: 'a stored one adds its stored bidders', existing: [stored('a', 0)], stored: { 'db-a': ['cy', 'ann'] }, bids: [bid('1', 'ann')], count: 2 },
    { name: 'nameless bids count no bidder', existing: [], stored: {}, bids: [bid('1', null)], count: 0 },
    { name: 'no bids at all leave the count unknown', existing: [], stored: {}, bids: [], count: null },
    { name: 'stored bidders count without new bids', existing: [stored('a', 0)], stored: { 'db-a': ['cy'] }, bids: [], count: 1 },
  ])('$name', ({ existing, stored: names, bids, count }) => {
    const batch = plan([obs('a', 1, { bids })], existing);
    const storedBidders = new Map(Object.entries(names));
    expect(auctionRowsToWrite(batch.plans, storedBidders).map((r) => r.unique_bidder_count)).toEqual([count]);
  });

  it('asks for stored bidders only of rewritten stored auctions that get bids', () => {
    const batch = plan(
      [obs('new', 1, { bids: [bid('1')] }), obs('rewritten', 1, { bids: [bid('2')] }), obs('quiet', 1), obs('stale', 1, { bids: [bid('3')] })],
      [stored('rewritten', 0), stored('quiet', 0), stored('stale', 5)],
    );
    expect(auctionsNeedingBidders(batch.plans)).toEqual(['db-rewritten']);
    expect(auctionRowsToWrite(batch.plans, new Map()).map((r) => r.source_auction_id)).toEqual(['new', 'rewritten', 'quiet']);
  });
});

describe('bids to write', () => {
  const priced = (id: string, amount: number) => ({ ...bid(id), amount });

  it('writes each bid once per auction with its latest values, in plan order', () => {
    const batch = plan([obs('a', 1, { bids: [priced('x', 100), priced('y', 100)] }), obs('b', 1, { bids: [priced('z', 100)] }), obs('a', 2, { bids: [priced('x', 150)] })]);
    expect(bidsToWrite(batch.plans, ['1', '2']).map((b) => [b.source_bid_id, b.amount, b.auction_id])).toEqual([
      ['x', 150, '1'],
      ['y', 100, '1'],
      ['z', 100, '2'],
    ]);
  });

  it.each([
    { name: 'nothing inserted: every bid is a stored one', inserted: [], stored: ['x', 'y'] },
    { name: 'inserted bids are not stored ones', inserted: [['x', '1']], stored: ['y'] },
    { name: 'the same source id under another auction is another bid', inserted: [['x', '2']], stored: ['x', 'y'] },
  ])('$name', ({ inserted, stored: expected }) => {
    const bids = [
      { source_bid_id: 'x', auction_id: '1' },
      { source_bid_id: 'y', auction_id: '1' },
    ];
    const rows = inserted.map(([id, auction]) => ({ id: '9', source: 'bringatrailer', source_bid_id: id, auction_id: auction }));
    expect(storedBids(bids, rows).map((b) => b.source_bid_id)).toEqual(expected);
  });

  it.each([
    { name: 'a rewritten auction carries its count', existing: [], observations: [obs('a', 1, { bids: [bid('1')] })], recount: [] },
    { name: 'a stale state does not: recounted', existing: [stored('a', 5)], observations: [obs('a', 1, { bids: [bid('1')] })], recount: ['db-a'] },
    { name: 'bids-only: recounted', existing: [stored('a', 0)], observations: [obs('a', 1, { bidsOnly: true, bids: [bid('1')] })], recount: ['db-a'] },
  ])('$name', ({ existing, observations, recount }) => {
    const batch = plan(observations, existing);
    const ids = batch.plans.map((p) => p.before?.id ?? 'new-a');
    const inserted = [{ id: '9', source: 'bringatrailer', source_bid_id: '1', auction_id: ids[0] }];
    expect(auctionsToRecount(batch.plans, ids, inserted)).toEqual(recount);
    expect(auctionsToRecount(batch.plans, ids, [])).toEqual([]);
  });
});
