import 'reflect-metadata';
import { OBSERVATION_JSON_SCHEMA, ObservationDto, validatePlain } from '@cars/contracts';
import Ajv from 'ajv';
import { parseObservation } from './observation-validator';

const fast = new Ajv({ strict: false }).compile(OBSERVATION_JSON_SCHEMA);

const valid = {
  source: 'bringatrailer',
  source_auction_id: '1',
  observed_at: '2026-11-21T12:00:03Z',
  auction: { status: 'active', price: 5, currency: 'USD', year: 1967, auction_end_at: '2026-11-25T19:00:00', mileage_unit: 'km', has_reserve: null, modifications: ['a'] },
  bids: [{ source_bid_id: 'b', amount: 1, bid_at: '2026-11-21T11:59:40' }],
};
const cases: [string, unknown][] = [
  ['valid', valid],
  ['bids-only', { ...valid, auction: undefined }],
  ['null auction and bids', { ...valid, auction: null, bids: null }],
  ['not an object', 'x'],
  ['array', []],
  ['missing observed_at', { ...valid, observed_at: undefined }],
  ['local observed_at', { ...valid, observed_at: '2026-11-21T12:00:03' }],
  ['upper-case source', { ...valid, source: 'BaT' }],
  ['empty auction id', { ...valid, source_auction_id: '' }],
  ['numeric auction id', { ...valid, source_auction_id: 5 }],
  ['extra member', { ...valid, extra: 1 }],
  ['extra auction member', { ...valid, auction: { ...valid.auction, colour: 'red' } }],
  ['extra bid member', { ...valid, bids: [{ ...valid.bids[0], bidder_id: 1 }] }],
  ['no status', { ...valid, auction: { ...valid.auction, status: undefined } }],
  ['empty status', { ...valid, auction: { ...valid.auction, status: '' } }],
  ['fractional year', { ...valid, auction: { ...valid.auction, year: 1967.5 } }],
  ['string price', { ...valid, auction: { ...valid.auction, price: '5' } }],
  ['negative price', { ...valid, auction: { ...valid.auction, price: -5 } }],
  ['huge price', { ...valid, auction: { ...valid.auction, price: 1e13 } }],
  ['fractional price', { ...valid, auction: { ...valid.auction, price: 5.5 } }],
  ['lower-case currency', { ...valid, auction: { ...valid.auction, currency: 'usd' } }],
  ['end date with time', { ...valid, auction: { ...valid.auction, auction_end_date: '2026-11-25T00:00:00' } }],
  ['bad unit', { ...valid, auction: { ...valid.auction, mileage_unit: 'miles' } }],
  ['non-string list item', { ...valid, auction: { ...valid.auction, known_flaws: [1] } }],
  ['string reserve', { ...valid, auction: { ...valid.auction, has_reserve: 'yes' } }],
  ['bid without id', { ...valid, bids: [{ amount: 1 }] }],
  ['bid not an object', { ...valid, bids: ['x'] }],
  ['bids not an array', { ...valid, bids: {} }],
  ['auction a string', { ...valid, auction: 'x' }],
  ['bid time with offset', { ...valid, bids: [{ source_bid_id: 'b', bid_at: '2026-11-21T11:59:40+01:00' }] }],
];

describe('observation validation', () => {
  it.each(cases)('the fast schema never accepts what ObservationDto rejects: %s', (_name, value) => {
    const reference = validatePlain(ObservationDto, value).ok;
    if (fast(value)) expect(reference).toBe(true);
    expect(parseObservation(value).ok).toBe(reference);
  });

  it('agrees with the DTO on the common cases (so the fast path is taken)', () => {
    expect(fast(valid)).toBe(true);
    expect(fast({ ...valid, auction: undefined })).toBe(true);
  });

  it('gives the DTO reasons for a rejection', () => {
    const outcome = parseObservation({ ...valid, auction: { ...valid.auction, year: 'old' } });
    expect(outcome).toEqual({ ok: false, reason: expect.stringContaining('auction.year') as unknown });
  });
});
