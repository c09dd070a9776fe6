import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync } from 'class-validator';
import { compileValidator } from './compiled-validation';
import { LiveAuctionsQueryDto, SearchAuctionsQueryDto } from './dto/auctions.dto';
import { AuctionIdParamDto, ListBidsQueryDto } from './dto/bids.dto';
import { ListModelsQueryDto } from './dto/makes.dto';
import { StatsQueryDto } from './dto/stats.dto';
import { validatePlain } from './validation';

/**
 * The compiled path may only accept what class-validator accepts, and must then produce the same
 * DTO: checked on a seeded corpus of queries mixing valid and invalid values of every parameter
 * (wrong types, bounds, lengths, enums, dates, cross-field rules, unknown and repeated parameters).
 */
const VALUES: Record<string, unknown[]> = {
  make: ['Porsche', '', 'x'.repeat(100), 'x'.repeat(101), 'a\u0000b', ['Porsche', 'Ford'], '\uFE0F', '😀'.repeat(60)],
  model: ['911', '', 'M3'],
  vin: ['WP0AB0916KS120123', 'x'.repeat(65)],
  seller_username: ['flat6fan', ''],
  keyword: ['matching numbers', '  gullwing ', '   ', 'x'.repeat(100), ` ${'x'.repeat(100)} `],
  year_min: ['1965', '0', '9999', '10000', '-1', '+1965', '19.5', 'abc', '', '1e3', ['1965', '1970']],
  year_max: ['1973', '1960', '9999'],
  price_min: ['50000', '9007199254740991', '9007199254740992', '12345678901234567'],
  price_max: ['150000', '100'],
  page: ['1', '0', '200', '2147483647', '2147483648'],
  limit: ['1', '20', '100', '101', '0'],
  pagination: ['page', 'cursor', 'Cursor'],
  cursor: ['eyJ2IjoxLCJrIjoiMjAyNi0wMS0zMSJ9.q1w2e3r4t5y6u7i8o9p0aa', 'not-a-cursor'],
  status: ['sold', 'bid to', 'SOLD'],
  source: ['bringatrailer', 'carsandbids', 'hagerty', 'ebay'],
  sort: ['date', 'price', 'ending', 'bid_at', 'amount', 'nope'],
  direction: ['asc', 'desc', 'up'],
  ending_after: ['2026-01-31T18:00:00Z', '2026-01-31', '2026-02-30', '2026-01-31T18:00:00', '2026-01-31T18:00:00 01:00'],
  ending_before: ['2026-02-07T18:00:00Z', '2026-01-01'],
  updated_since: ['2026-01-31T17:55:00+01:00', 'yesterday'],
  bid_after: ['2026-01-30T00:00:00Z', '2026-13-01'],
  bid_before: ['2026-01-31T23:59:59Z', '2026-01-01T00:00:00Z'],
  auction_id: ['48213', '0', '9223372036854775807', '9223372036854775808', '12a'],
  year: ['1967'],
  colour: ['red'],
  __proto__x: ['1'],
};
const NAMES = Object.keys(VALUES);

/** Deterministic PRNG (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function reference<T extends object>(cls: new () => T, plain: object): { valid: boolean; value: T } {
  const value = plainToInstance(cls, plain);
  const errors = validateSync(value, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true });
  return { valid: errors.length === 0, value };
}

/** Values of a payload that went through JSON, of every kind a member can have there. */
const SCALARS: unknown[] = [0, 1, 20, 100, 101, -1, 1965, 19.5, 9999, 10000, 2147483648, 9007199254740992, true, false, null, 'x', '20', '', [1], { a: 1 }];

const classes = [SearchAuctionsQueryDto, LiveAuctionsQueryDto, ListBidsQueryDto, AuctionIdParamDto, ListModelsQueryDto, StatsQueryDto];

/** `count` seeded queries: mostly parameters of `cls`, sometimes any, values from VALUES (and `extra`). */
function corpus(cls: new () => object, seed: number, count: number, extra: unknown[] = []): Record<string, unknown>[] {
  const next = random(seed);
  const own = [...new Set(getMetadataStorage().getTargetValidationMetadatas(cls, '', false, false).map((m) => m.propertyName))];
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < count; i += 1) {
    const plain: Record<string, unknown> = {};
    const size = Math.floor(next() * 5);
    for (let j = 0; j < size; j += 1) {
      const names = next() < 0.9 ? own : NAMES;
      const name = names[Math.floor(next() * names.length)];
      const values = [...(VALUES[name] ?? ['x']), ...extra];
      plain[name] = values[Math.floor(next() * values.length)];
    }
    out.push(plain);
  }
  return out;
}

describe('compiled validation of message payloads (validatePlain)', () => {
  it.each(classes.map((cls) => [cls.name, cls] as const))(
    '%s: a valid DTO sent through JSON is accepted as the same DTO; typed values only as class-validator accepts them',
    (_name, cls) => {
      const compiled = compileValidator(cls as new () => object, 'scalars')!;
      let roundTrips = 0;
      for (const plain of corpus(cls as new () => object, 23, 3000)) {
        const expected = reference(cls as new () => object, plain);
        if (!expected.valid) continue;
        // What the gateway sends and the service consumes: the DTO as JSON.
        const payload = JSON.parse(JSON.stringify({ ...expected.value })) as object;
        const again = reference(cls as new () => object, payload);
        const fast = compiled(payload);
        expect({ payload, accepted: fast !== undefined }).toEqual({ payload, accepted: again.valid });
        if (fast !== undefined) {
          roundTrips += 1;
          expect(fast).toBeInstanceOf(cls);
          expect({ ...fast }).toEqual({ ...again.value });
          const outcome = validatePlain(cls as new () => object, payload);
          expect(outcome).toEqual({ ok: true, value: fast });
        }
      }
      expect(roundTrips).toBeGreaterThan(100);

      let accepted = 0;
      for (const plain of corpus(cls as new () => object, 29, 3000, SCALARS)) {
        const expected = reference(cls as new () => object, plain);
        const fast = compiled({ ...plain });
        if (fast === undefined) continue;
        accepted += 1;
        expect({ plain, valid: expected.valid }).toEqual({ plain, valid: true });
        expect({ ...fast }).toEqual({ ...expected.value });
      }
      expect(accepted).toBeGreaterThan(50);
    },
  );

  it('keeps the 400 details of class-validator for what it does not accept', () => {
    expect(validatePlain(SearchAuctionsQueryDto, { limit: 101, colour: 'red' })).toEqual({
      ok: false,
      details: { limit: ['limit must be an integer from 1 to 100'], colour: ['colour is not a recognised parameter'] },
    });
    expect(validatePlain(SearchAuctionsQueryDto, { make: null })).toMatchObject({ ok: true });
    expect(validatePlain(SearchAuctionsQueryDto, [])).toEqual({ ok: false, details: { body: ['must be an object'] } });
  });
});

describe('compiled validation of query and path parameters', () => {

  it.each(classes.map((cls) => [cls.name, cls] as const))('%s: accepts only what class-validator accepts, with the same DTO', (_name, cls) => {
    const compiled = compileValidator(cls as new () => object);
    expect(compiled).not.toBeNull();
    const next = random(17);
    const own = [...new Set(getMetadataStorage().getTargetValidationMetadatas(cls, '', false, false).map((m) => m.propertyName))];
    let accepted = 0;
    let valid = 0;
    for (let i = 0; i < 4000; i += 1) {
      const plain: Record<string, unknown> = {};
      const count = Math.floor(next() * 5);
      for (let j = 0; j < count; j += 1) {
        // Mostly parameters of this DTO, sometimes any.
        const names = next() < 0.9 ? own : NAMES;
        const name = names[Math.floor(next() * names.length)];
        const values = VALUES[name] ?? ['x'];
        plain[name] = values[Math.floor(next() * values.length)];
      }
      const expected = reference(cls as new () => object, plain);
      const fast = compiled!({ ...plain });
      if (expected.valid) valid += 1;
      if (fast !== undefined) {
        accepted += 1;
        expect({ plain, valid: expected.valid }).toEqual({ plain, valid: true });
        expect(fast).toBeInstanceOf(cls);
        expect({ ...fast }).toEqual({ ...expected.value });
      }
    }
    // The compiled path takes the valid requests (the point of it), except those it leaves to
    // class-validator on purpose (none in this corpus but non-string values).
    expect(accepted).toBe(valid);
    expect(valid).toBeGreaterThan(200);
  });

  it('leaves non-objects and repeated parameters to class-validator', () => {
    const compiled = compileValidator(SearchAuctionsQueryDto)!;
    expect(compiled(null)).toBeUndefined();
    expect(compiled(['make'])).toBeUndefined();
    expect(compiled({ make: ['Porsche', 'Ford'] })).toBeUndefined();
    expect(compiled({ make: 'Porsche', limit: '20' })).toEqual(Object.assign(new SearchAuctionsQueryDto(), { make: 'Porsche', limit: 20 }));
  });
});
