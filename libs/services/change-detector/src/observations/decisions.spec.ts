import { EventAuction } from '@cars/contracts';
import { decideAuctionEvent, isEligible, meaningfulChanges, meaningfulState } from './decisions';

const auction = (over: Partial<EventAuction> = {}): EventAuction => ({
  id: '1',
  source: 'bringatrailer',
  url: 'https://bringatrailer.com/listing/x',
  title: '1967 Porsche 911S',
  status: 'active',
  price: 100000,
  currency: 'USD',
  year: 1967,
  make: 'Porsche',
  model: '911S',
  auction_end_at: '2026-11-25T19:00:00',
  auction_end_date: '2026-11-25',
  bid_count: 10,
  sale_type: 'auction',
  price_type: 'bid',
  ...over,
});
const state = (over: Partial<EventAuction> = {}) => meaningfulState(auction(over));

describe('meaningfulChanges', () => {
  it('reports each meaningful field as {before, after}', () => {
    expect(meaningfulChanges(state(), state({ price: 120000, bid_count: 11 }))).toEqual({
      price: { before: 100000, after: 120000 },
      bid_count: { before: 10, after: 11 },
    });
  });

  it('covers title, status, price, currency, year, make, model, end time/date, bid count, sale and price type', () => {
    const after = state({
      title: 't',
      status: 'sold',
      price: 1,
      currency: 'EUR',
      year: 1968,
      make: 'Ferrari',
      model: 'Dino',
      auction_end_at: '2026-11-26T19:00:00',
      auction_end_date: '2026-11-26',
      bid_count: 1,
      sale_type: 'classified',
      price_type: 'sale',
    });
    expect(Object.keys(meaningfulChanges(state(), after)).sort()).toEqual(
      ['auction_end_at', 'auction_end_date', 'bid_count', 'currency', 'make', 'model', 'price', 'price_type', 'sale_type', 'status', 'title', 'year'].sort(),
    );
  });

  it('ignores url and fields outside the meaningful set', () => {
    expect(meaningfulChanges(state(), meaningfulState({ ...auction(), url: 'https://elsewhere' }))).toEqual({});
  });

  it('treats undefined and null alike', () => {
    expect(meaningfulChanges(state({ title: null }), { ...state(), title: undefined as unknown as null })).toEqual({});
  });
});

describe('decideAuctionEvent', () => {
  it('a new auction is auction.created with empty changes', () => {
    expect(decideAuctionEvent(null, state())).toEqual({ type: 'auction.created', changes: {} });
  });

  it('no meaningful change, no event (a change reverted within the transaction included)', () => {
    expect(decideAuctionEvent(state(), state())).toBeNull();
  });

  it('a meaningful change is auction.updated', () => {
    expect(decideAuctionEvent(state(), state({ title: 'New title' }))).toEqual({
      type: 'auction.updated',
      changes: { title: { before: '1967 Porsche 911S', after: 'New title' } },
    });
  });

  it.each(['sold', 'reserve not met', 'result unavailable', 'canceled', 'withdrawn'])(
    'active → %s is auction.ended (instead of updated), with all changes',
    (ending) => {
      const decision = decideAuctionEvent(state(), state({ status: ending, price: 150000 }));
      expect(decision?.type).toBe('auction.ended');
      expect(decision?.changes).toEqual({
        status: { before: 'active', after: ending },
        price: { before: 100000, after: 150000 },
      });
    },
  );

  it('coming soon → withdrawn is auction.ended', () => {
    expect(decideAuctionEvent(state({ status: 'coming soon' }), state({ status: 'withdrawn' }))?.type).toBe('auction.ended');
  });

  it('coming soon → active is an update', () => {
    expect(decideAuctionEvent(state({ status: 'coming soon' }), state({ status: 'active' }))?.type).toBe('auction.updated');
  });

  it('ending state → another ending state is an update, not an end', () => {
    expect(decideAuctionEvent(state({ status: 'reserve not met' }), state({ status: 'sold' }))?.type).toBe('auction.updated');
  });

  it('active → an unknown source status is an update', () => {
    expect(decideAuctionEvent(state(), state({ status: 'paused' }))?.type).toBe('auction.updated');
  });

  it('views, watchers and comments are not part of the state at all', () => {
    expect(Object.keys(state())).not.toEqual(expect.arrayContaining(['views']));
  });
});

describe('isEligible', () => {
  it('auctions ending in 2016 or later are eligible', () => {
    expect(isEligible({ auction_end_date: '2016-01-01' })).toBe(true);
    expect(isEligible({ auction_end_date: '2026-11-25' })).toBe(true);
  });

  it('auctions ending before 2016 are not', () => {
    expect(isEligible({ auction_end_date: '2015-12-31' })).toBe(false);
    expect(isEligible({ auction_end_date: null, auction_end_at: '2015-06-01T10:00:00' })).toBe(false);
  });

  it('an auction without a known end is eligible', () => {
    expect(isEligible({ auction_end_date: null, auction_end_at: null })).toBe(true);
  });

  it('a confirmed make exclusion is never eligible', () => {
    expect(isEligible({ auction_end_date: '2026-01-01' }, true)).toBe(false);
  });
});
