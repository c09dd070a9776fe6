import { Observation } from '@cars/contracts';
import type { SourceContext } from '../normalization/source-context';
import { buildAuctionRow, buildBidRow, restStatus } from './auction-row';
import { parseWallClock } from './wall-clock';

const bat: SourceContext = { id: 'bringatrailer', timezone: 'America/Los_Angeles', unsoldReportsHighBidOnly: true, defaultCurrency: 'USD' };
const cc: SourceContext = { id: 'collectingcars', timezone: 'Europe/London', unsoldReportsHighBidOnly: false, defaultCurrency: 'GBP' };
const names = { make: 'Porsche', model: '911', excluded: false };

const observation = (auction: Partial<NonNullable<Observation['auction']>> = {}): Observation & { auction: NonNullable<Observation['auction']> } => ({
  source: 'bringatrailer',
  source_auction_id: '88412',
  observed_at: '2026-11-21T12:00:03Z',
  auction: { status: 'active', price: 145000, currency: 'USD', make: 'porsche', model: '911S', ...auction },
});

describe('restStatus', () => {
  it.each([
    ['sold', 'sold', false],
    ['result unavailable', 'unknown', false],
    ['canceled', 'canceled', false],
    ['withdrawn', 'withdrawn', false],
    ['active', null, true],
    ['coming soon', null, true],
    ['something new', 'unknown', false],
  ])('%s → %s (live %s)', (source, rest, live) => {
    expect(restStatus(source, cc)).toEqual({ auction_status: rest, is_live: live });
  });

  it('reserve not met is "bid to" where the source reports only a high bid', () => {
    expect(restStatus('reserve not met', bat).auction_status).toBe('bid to');
    expect(restStatus('reserve not met', cc).auction_status).toBe('reserve not met');
  });
});

describe('wall-clock times', () => {
  it('reads a wall-clock time in the source zone (winter and summer offsets)', () => {
    expect(parseWallClock('2026-11-25T19:00:00', 'America/Los_Angeles')).toEqual({
      local: '2026-11-25T19:00:00',
      utc: '2026-11-26T03:00:00.000Z',
    });
    expect(parseWallClock('2026-07-01T12:00:00', 'America/Los_Angeles').utc).toBe('2026-07-01T19:00:00.000Z');
    expect(parseWallClock('2026-07-01T12:00:00', 'Europe/London').utc).toBe('2026-07-01T11:00:00.000Z');
  });

  it('honours an offset when a source sends one, keeping the source wall clock', () => {
    expect(parseWallClock('2026-11-26T03:00:00Z', 'America/Los_Angeles')).toEqual({
      local: '2026-11-25T19:00:00',
      utc: '2026-11-26T03:00:00.000Z',
    });
  });

  it('rejects impossible dates', () => {
    expect(() => parseWallClock('2026-02-30T10:00:00', 'Europe/London')).toThrow('invalid date-time');
  });
});

describe('buildAuctionRow', () => {
  it('stores wall clock, UTC instant, date, REST status, canonical names and USD price', () => {
    const row = buildAuctionRow(observation({ auction_end_at: '2026-11-25T19:00:00', views: 10 }), bat, names);
    expect(row).toMatchObject({
      source: 'bringatrailer',
      source_auction_id: '88412',
      source_status: 'active',
      auction_status: null,
      is_live: true,
      price: 145000,
      price_usd: 145000,
      auction_end_local: '2026-11-25T19:00:00',
      auction_end_at: '2026-11-26T03:00:00.000Z',
      auction_end_date: '2026-11-25',
      listing_make: 'porsche',
      ocd_make_name: 'Porsche',
      ocd_model_name: '911',
      views: 10,
      observed_at: '2026-11-21T12:00:03.000Z',
      modifications: [],
    });
  });

  it('keeps date-only sources date-only', () => {
    const row = buildAuctionRow(observation({ status: 'sold', auction_end_date: '2019-05-04' }), cc, names);
    expect(row).toMatchObject({ auction_end_date: '2019-05-04', auction_end_at: null, auction_end_local: null });
  });

  it('converts other currencies to USD with the FX table of the end month and rounds prices', () => {
    const row = buildAuctionRow(
      { ...observation({ status: 'sold', price: 10000.4, currency: 'GBP', auction_end_at: '2024-01-10T20:00:00' }), source: 'collectingcars' },
      cc,
      names,
    );
    expect(row.price).toBe(10000);
    expect(row.price_usd).toBe(12710);
  });

  it('derives standard colours', () => {
    const row = buildAuctionRow(observation({ exterior_color: 'Guards Red', interior_color: 'Black leather' }), bat, names);
    expect(row.standard_exterior_color).not.toBeUndefined();
  });
});

describe('buildBidRow', () => {
  it('keeps the wall clock and converts to UTC', () => {
    expect(buildBidRow({ source_bid_id: 'b1', bidder_name: 'x', amount: 5, currency: 'USD', bid_at: '2026-11-21T11:59:40' }, bat)).toEqual({
      source: 'bringatrailer',
      source_bid_id: 'b1',
      bidder_name: 'x',
      amount: 5,
      currency: 'USD',
      bid_at: '2026-11-21T19:59:40.000Z',
      bid_at_local: '2026-11-21T11:59:40',
    });
  });
});

describe('wall-clock times around DST changes', () => {
  it('uses the offset of the hour on a change day', () => {
    // America/Los_Angeles: 2026-03-08 02:00 PST → 03:00 PDT; 2026-11-01 02:00 PDT → 01:00 PST.
    expect(parseWallClock('2026-03-08T01:30:00', 'America/Los_Angeles').utc).toBe('2026-03-08T09:30:00.000Z');
    expect(parseWallClock('2026-03-08T04:00:00', 'America/Los_Angeles').utc).toBe('2026-03-08T11:00:00.000Z');
    expect(parseWallClock('2026-11-01T00:30:00', 'America/Los_Angeles').utc).toBe('2026-11-01T07:30:00.000Z');
    expect(parseWallClock('2026-11-01T05:00:00', 'America/Los_Angeles').utc).toBe('2026-11-01T13:00:00.000Z');
    expect(parseWallClock('2026-03-29T12:00:00', 'Europe/London').utc).toBe('2026-03-29T11:00:00.000Z');
    expect(parseWallClock('2026-03-29T00:30:00', 'Europe/London').utc).toBe('2026-03-29T00:30:00.000Z');
  });
});
