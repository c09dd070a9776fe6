import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  Observation,
  OBSERVATION_AUCTION_JSON_SCHEMA,
  OBSERVATION_BID_JSON_SCHEMA,
  OBSERVATION_JSON_SCHEMA,
  ObservationAuction,
  ObservationBid,
} from './observation.schema';
import { observationValidator, validateObservation } from './observation.validation';

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

// Compile-time checks of the types derived from the schema (a wrong shape fails `npm run typecheck`).
type Equal<X, Y> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? true : false;
const typeChecks: [
  Equal<Observation['source'], string>,
  Equal<Observation['auction'], ObservationAuction | null | undefined>,
  Equal<Observation['bids'], ObservationBid[] | null | undefined>,
  Equal<ObservationAuction['status'], string>,
  Equal<ObservationAuction['year'], number | null | undefined>,
  Equal<ObservationAuction['mileage_unit'], 'mi' | 'km' | null | undefined>,
  Equal<ObservationAuction['has_reserve'], boolean | null | undefined>,
  Equal<ObservationAuction['known_flaws'], string[] | null | undefined>,
  Equal<ObservationBid['source_bid_id'], string>,
  Equal<ObservationBid['amount'], number | null | undefined>,
] = [true, true, true, true, true, true, true, true, true, true];

describe('validateObservation', () => {
  it('derives its types from the schema', () => {
    expect(typeChecks.every(Boolean)).toBe(true);
    const typed: Observation = valid as Observation;
    expect(Object.keys(OBSERVATION_JSON_SCHEMA.properties)).toEqual(Object.keys(typed));
  });

  it('accepts a complete observation, as is', () => {
    const outcome = validateObservation(valid);
    expect(outcome).toEqual({ ok: true, value: valid });
    if (outcome.ok) expect(outcome.value).toBe(valid);
  });

  it('accepts a bids-only observation', () => {
    const { auction: _auction, ...bidsOnly } = valid;
    expect(validateObservation(bidsOnly).ok).toBe(true);
  });

  it('compiles once', () => {
    expect(observationValidator()).toBe(observationValidator());
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
    // Arrays are not objects, and inherited names are members like any other.
    ['auction an array', { ...valid, auction: [{ status: 'active' }] }, 'auction'],
    ['bid an array', { ...valid, bids: [[]] }, 'bids.0'],
    ['a member named constructor', JSON.parse('{"source":"a","source_auction_id":"1","observed_at":"2026-11-21T12:00:03Z","constructor":1}'), 'constructor'],
    ['a member named __proto__', JSON.parse('{"source":"a","source_auction_id":"1","observed_at":"2026-11-21T12:00:03Z","__proto__":{}}'), '__proto__'],
  ])('rejects %s, naming the field', (_name, value, field) => {
    const outcome = validateObservation(value);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(Object.keys(outcome.details)).toContain(field);
  });

  it.each<[string, unknown, Record<string, string[]>]>([
    ['not an object', 'x', { body: ['must be an object'] }],
    ['missing members', {}, { source: ['is required'], source_auction_id: ['is required'], observed_at: ['is required'] }],
    ['source', { ...valid, source: 'Bring a Trailer' }, { source: ['must be a lowercase platform identifier'] }],
    ['observed_at', { ...valid, observed_at: 'yesterday' }, { observed_at: ['must be an ISO 8601 instant with Z or an offset'] }],
    ['year', { ...valid, auction: { ...valid.auction, year: 2201 } }, { 'auction.year': ['must be <= 2200'] }],
    ['year type', { ...valid, auction: { ...valid.auction, year: 1967.5 } }, { 'auction.year': ['must be an integer or null'] }],
    ['status', { ...valid, auction: { ...valid.auction, status: '' } }, { 'auction.status': ['must not be empty'] }],
    ['vin', { ...valid, auction: { ...valid.auction, vin: 'v'.repeat(65) } }, { 'auction.vin': ['must be at most 64 characters'] }],
    ['list', { ...valid, auction: { ...valid.auction, known_flaws: Array(501).fill('x') } }, { 'auction.known_flaws': ['must have at most 500 items'] }],
    ['list item', { ...valid, auction: { ...valid.auction, known_flaws: ['x', 2] } }, { 'auction.known_flaws.1': ['must be a string'] }],
    ['unit', { ...valid, auction: { ...valid.auction, mileage_unit: 'miles' } }, { 'auction.mileage_unit': ['must be one of "mi", "km", null'] }],
    ['end date', { ...valid, auction: { ...valid.auction, auction_end_date: '25/11/2026' } }, { 'auction.auction_end_date': ['must be a date (YYYY-MM-DD)'] }],
    ['end time', { ...valid, auction: { ...valid.auction, auction_end_at: 'soon' } }, { 'auction.auction_end_at': ['must be a date-time (YYYY-MM-DDTHH:MM:SS)'] }],
    ['unknown member', { ...valid, not: 1 }, { not: ['not a recognised field'] }],
    ['bid', { ...valid, bids: [valid.bids[0], { source_bid_id: 'b', amount: -1, currency: 'usd' }] }, { 'bids.1.amount': ['must be >= 0'], 'bids.1.currency': ['must be an ISO 4217 code (e.g. USD)'] }],
    [
      'several fields at once',
      { ...valid, source: 5, auction: { ...valid.auction, status: undefined, price: 1e13 }, bids: {} },
      { source: ['must be a string'], 'auction.status': ['is required'], 'auction.price': ['must be <= 1000000000000'], bids: ['must be an array or null'] },
    ],
  ])('words the problems of %s', (_name, value, details) => {
    expect(validateObservation(value)).toEqual({ ok: false, details });
  });

  describe('as docs/api/ingestion.md documents it', () => {
    const doc = readFileSync(join(__dirname, '..', '..', '..', '..', 'docs', 'api', 'ingestion.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## The observation\n'), doc.indexOf('\n## ', doc.indexOf('## The observation\n') + 1));

    it('has an example the contract accepts', () => {
      const example = /```json\n([\s\S]*?)\n```/.exec(section)?.[1];
      expect(validateObservation(JSON.parse(example ?? 'null'))).toMatchObject({ ok: true });
    });

    it('describes every member of the contract, and no other', () => {
      // The first cell of each row of the member tables (`| Member | … |`): one or more `names`.
      const documented = section
        .split('\n\n')
        .filter((block) => block.startsWith('| Member |'))
        .flatMap((table) => table.split('\n').slice(2))
        .flatMap((row) => [...row.split('|')[1].matchAll(/`([a-z_]+)`/g)].map((m) => m[1]));
      const members = [OBSERVATION_JSON_SCHEMA, OBSERVATION_AUCTION_JSON_SCHEMA, OBSERVATION_BID_JSON_SCHEMA].flatMap((schema) =>
        Object.keys(schema.properties),
      );
      expect([...documented].sort()).toEqual([...members].sort());
    });
  });
});
