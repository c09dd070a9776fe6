import 'reflect-metadata';
import { validatePlain } from '../validation';
import { ObservationDto } from './observation.dto';

const valid = {
  source: 'bringatrailer',
  source_auction_id: '88412',
  observed_at: '2026-11-21T12:00:03Z',
  auction: {
    url: 'https://bringatrailer.com/listing/x',
    title: '1967 Porsche 911S Coupe',
    status: 'active',
    price: 145000,
    currency: 'USD',
    year: 1967,
    make: 'Porsche',
    model: '911',
    auction_end_at: '2026-11-25T19:00:00',
    auction_end_date: null,
    bid_count: 31,
    sale_type: 'auction',
    price_type: 'bid',
    mileage: 52000,
    mileage_unit: 'mi',
    vin: '123',
    has_reserve: true,
    modifications: [],
    known_flaws: ['dent'],
    views: 1234,
    watches: 56,
    likes: 7,
    comments: 12,
  },
  bids: [{ source_bid_id: 'b-991', bidder_name: 'x', amount: 145000, currency: 'USD', bid_at: '2026-11-21T11:59:40' }],
};

describe('ObservationDto', () => {
  it('accepts the DESIGN.md §7 example', () => {
    expect(validatePlain(ObservationDto, valid).ok).toBe(true);
  });

  it('accepts a bids-only observation', () => {
    const { auction: _auction, ...bidsOnly } = valid;
    expect(validatePlain(ObservationDto, bidsOnly).ok).toBe(true);
  });

  it.each([
    ['missing source', { ...valid, source: undefined }, 'source'],
    ['observed_at without offset', { ...valid, observed_at: '2026-11-21T12:00:03' }, 'observed_at'],
    ['status missing', { ...valid, auction: { ...valid.auction, status: undefined } }, 'auction.status'],
    ['year not an integer', { ...valid, auction: { ...valid.auction, year: 'old' } }, 'auction.year'],
    ['negative price', { ...valid, auction: { ...valid.auction, price: -1 } }, 'auction.price'],
    ['bad currency', { ...valid, auction: { ...valid.auction, currency: 'usd' } }, 'auction.currency'],
    ['unknown member', { ...valid, auction: { ...valid.auction, colour: 'red' } }, 'auction.colour'],
    ['bid without id', { ...valid, bids: [{ amount: 5 }] }, 'bids.0.source_bid_id'],
    ['auction not an object', { ...valid, auction: 'x' }, 'auction'],
  ])('rejects %s', (_name, value, field) => {
    const outcome = validatePlain(ObservationDto, value);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(Object.keys(outcome.details)).toContain(field);
  });
});
