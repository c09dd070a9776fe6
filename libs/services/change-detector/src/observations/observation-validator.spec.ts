import { parseObservation } from './observation-validator';

const valid = {
  source: 'bringatrailer',
  source_auction_id: '1',
  observed_at: '2026-11-21T12:00:03Z',
  auction: { status: 'active', price: 5, currency: 'USD', year: 1967, auction_end_at: '2026-11-25T19:00:00', mileage_unit: 'km', has_reserve: null, modifications: ['a'] },
  bids: [{ source_bid_id: 'b', amount: 1, bid_at: '2026-11-21T11:59:40' }],
};

/** Accepted, or rejected with a reason naming this field. */
const ACCEPTED = true;
const cases: [string, unknown, typeof ACCEPTED | string][] = [
  ['valid', valid, ACCEPTED],
  ['bids-only', { ...valid, auction: undefined }, ACCEPTED],
  ['null auction and bids', { ...valid, auction: null, bids: null }, ACCEPTED],
  ['fractional price', { ...valid, auction: { ...valid.auction, price: 5.5 } }, ACCEPTED],
  ['bid time with offset', { ...valid, bids: [{ source_bid_id: 'b', bid_at: '2026-11-21T11:59:40+01:00' }] }, ACCEPTED],
  ['null optional members', { ...valid, auction: { ...valid.auction, price: null, currency: null, year: null, mileage_unit: null, modifications: null } }, ACCEPTED],
  ['limits reached', { ...valid, auction: { ...valid.auction, year: 2200, price: 1e12, vin: 'v'.repeat(64) } }, ACCEPTED],
  ['wall-clock time with a space', { ...valid, auction: { ...valid.auction, auction_end_at: '2026-11-25 19:00' } }, ACCEPTED],
  ['not an object', 'x', 'body'],
  ['array', [], 'body'],
  ['null', null, 'body'],
  ['missing observed_at', { ...valid, observed_at: undefined }, 'observed_at'],
  ['local observed_at', { ...valid, observed_at: '2026-11-21T12:00:03' }, 'observed_at'],
  ['upper-case source', { ...valid, source: 'BaT' }, 'source'],
  ['empty auction id', { ...valid, source_auction_id: '' }, 'source_auction_id'],
  ['numeric auction id', { ...valid, source_auction_id: 5 }, 'source_auction_id'],
  ['extra member', { ...valid, extra: 1 }, 'extra'],
  ['extra auction member', { ...valid, auction: { ...valid.auction, colour: 'red' } }, 'auction.colour'],
  ['extra bid member', { ...valid, bids: [{ ...valid.bids[0], bidder_id: 1 }] }, 'bids.0.bidder_id'],
  ['no status', { ...valid, auction: { ...valid.auction, status: undefined } }, 'auction.status'],
  ['empty status', { ...valid, auction: { ...valid.auction, status: '' } }, 'auction.status'],
  ['fractional year', { ...valid, auction: { ...valid.auction, year: 1967.5 } }, 'auction.year'],
  ['year too late', { ...valid, auction: { ...valid.auction, year: 2201 } }, 'auction.year'],
  ['string price', { ...valid, auction: { ...valid.auction, price: '5' } }, 'auction.price'],
  ['negative price', { ...valid, auction: { ...valid.auction, price: -5 } }, 'auction.price'],
  ['huge price', { ...valid, auction: { ...valid.auction, price: 1e13 } }, 'auction.price'],
  ['lower-case currency', { ...valid, auction: { ...valid.auction, currency: 'usd' } }, 'auction.currency'],
  ['end date with time', { ...valid, auction: { ...valid.auction, auction_end_date: '2026-11-25T00:00:00' } }, 'auction.auction_end_date'],
  ['bad unit', { ...valid, auction: { ...valid.auction, mileage_unit: 'miles' } }, 'auction.mileage_unit'],
  ['non-string list item', { ...valid, auction: { ...valid.auction, known_flaws: [1] } }, 'auction.known_flaws.0'],
  ['string reserve', { ...valid, auction: { ...valid.auction, has_reserve: 'yes' } }, 'auction.has_reserve'],
  ['long vin', { ...valid, auction: { ...valid.auction, vin: 'v'.repeat(65) } }, 'auction.vin'],
  ['bid without id', { ...valid, bids: [{ amount: 1 }] }, 'bids.0.source_bid_id'],
  ['bid not an object', { ...valid, bids: ['x'] }, 'bids.0'],
  ['bids not an array', { ...valid, bids: {} }, 'bids'],
  ['auction a string', { ...valid, auction: 'x' }, 'auction'],
  ['auction an array', { ...valid, auction: [valid.auction] }, 'auction'],
  ['bid time in words', { ...valid, bids: [{ source_bid_id: 'b', bid_at: 'yesterday' }] }, 'bids.0.bid_at'],
];

describe('parseObservation', () => {
  it.each(cases)('%s', (_name, value, expected) => {
    const outcome = parseObservation(value);
    if (expected === ACCEPTED) {
      expect(outcome).toEqual({ ok: true, value });
    } else {
      expect(outcome.ok).toBe(false);
      if (!outcome.ok) expect(outcome.reason).toMatch(new RegExp(`^invalid observation: (.* \\| )?${expected.replace(/\./g, '\\.')}: `));
    }
  });

  it('words the reason field by field', () => {
    const outcome = parseObservation({ ...valid, source: 'BaT', auction: { ...valid.auction, year: 'old', colour: 'red' } });
    expect(outcome).toEqual({
      ok: false,
      reason:
        'invalid observation: source: must be a lowercase platform identifier | auction.colour: not a recognised field | auction.year: must be an integer or null',
    });
  });
});
