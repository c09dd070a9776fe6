import {
  AuctionFilters,
  AuctionScope,
  countQuery,
  descriptionTokenPatterns,
  escapeLike,
  filtersKey,
  keywordIndexable,
  keywordStrategy,
  pageQuery,
  PageRequest,
  SqlQuery,
} from './auction-query';

/**
 * The statements' results are the subject of auctions.repository.integration-spec.ts (real
 * PostgreSQL). Here: what can be known without a database — every value travels as a bind
 * parameter, placeholders are numbered without gaps, and the keyword helpers.
 */

/** A value of each filter that would break the statement (or widen it) if spliced into its text. */
const HOSTILE = `x' OR '1'='1`;
const HOSTILE_FILTERS: AuctionFilters = {
  make: `${HOSTILE} make`,
  model: `${HOSTILE} model`,
  vin: `${HOSTILE} vin`,
  seller_username: `${HOSTILE} seller`,
  year_min: 1960,
  year_max: 1970,
  price_min: 1001,
  price_max: 2002,
  status: `${HOSTILE} status`,
  source: `${HOSTILE} source`,
  keyword: `${HOSTILE} keyword`,
  ending_after: '2030-01-01T00:00:00Z',
  ending_before: '2030-01-02T00:00:00+01:00',
  updated_since: '2029-12-31T00:00:00Z',
};

/** The placeholder numbers a statement uses. */
function placeholders(query: SqlQuery): number[] {
  return [...new Set([...query.text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])))].sort((a, b) => a - b);
}

/** Every bound value is referenced, and nothing beyond them: $1…$n, n = values.length. */
function expectDenseBinding(query: SqlQuery): void {
  expect(placeholders(query)).toEqual(query.values.map((_, i) => i + 1));
}

const PAGE: Omit<PageRequest, 'scope'> = { filters: HOSTILE_FILTERS, order: { sort: 'price', direction: 'asc' }, limit: 50 };

/** Page requests covering every optional part of the statement. */
function pageVariants(scope: AuctionScope): [string, PageRequest][] {
  return [
    ['first page', { ...PAGE, scope }],
    ['offset page', { ...PAGE, scope, offset: 100 }],
    ['keyset page', { ...PAGE, scope, after: { key: '145000', id: '42' } }],
    ['keyset page in the nulls tail', { ...PAGE, scope, after: { key: null, id: '42' } }],
    ['nulls only', { ...PAGE, scope, nullsOnly: true }],
    ['with the data version', { ...PAGE, scope, with: 'data_version' }],
    ['with the total, after a position', { ...PAGE, scope, with: 'total', after: { key: '145000', id: '42' } }],
    ['walking for a keyword', { ...PAGE, scope, keywordStrategy: 'walk' }],
    ['collecting for a keyword', { ...PAGE, scope, keywordStrategy: 'bitmap' }],
  ];
}

describe('auction SQL', () => {
  it('binds every filter value as a parameter and never writes one into the text', () => {
    for (const scope of ['completed', 'live'] as const) {
      const statements: [string, SqlQuery][] = [
        ['count', countQuery(scope, HOSTILE_FILTERS)],
        ...pageVariants(scope).map(([name, request]): [string, SqlQuery] => [name, pageQuery(request)]),
      ];
      for (const [name, query] of statements) {
        expect({ scope, name, hostile: query.text.includes(HOSTILE) }).toEqual({ scope, name, hostile: false });
        for (const value of ['1960', '1970', '1001', '2002', '2030-01-01', '145000', "'42'"]) {
          expect({ scope, name, value, inText: query.text.includes(value) }).toEqual({ scope, name, value, inText: false });
        }
        for (const [filter, value] of Object.entries(HOSTILE_FILTERS)) {
          const bound = filter === 'keyword' ? `%${value}%` : value;
          expect({ scope, name, filter, bound: query.values.includes(bound) }).toEqual({ scope, name, filter, bound: true });
        }
      }
    }
  });

  it('numbers placeholders $1…$n for exactly the values it binds', () => {
    for (const scope of ['completed', 'live'] as const) {
      expectDenseBinding(countQuery(scope, HOSTILE_FILTERS));
      expectDenseBinding(countQuery(scope, {}));
      expectDenseBinding(countQuery(scope, { keyword: 'matching numbers' }));
      for (const [, request] of pageVariants(scope)) expectDenseBinding(pageQuery(request));
      expectDenseBinding(pageQuery({ scope, filters: {}, order: { sort: 'date', direction: 'desc' }, limit: 1 }));
    }
  });

  it('binds the page size, offset and keyset position', () => {
    const filters = { make: 'BMW' };
    const order = { sort: 'date', direction: 'desc' } as const;
    expect(pageQuery({ scope: 'completed', filters, order, limit: 50, offset: 100 }).values).toEqual(['BMW', 50, 100]);
    // No offset parameter for the first page.
    expect(pageQuery({ scope: 'completed', filters, order, limit: 50, offset: 0 }).values).toEqual(['BMW', 50]);
    expect(pageQuery({ scope: 'completed', filters, order, limit: 51, after: { key: '2025-06-01', id: '42' } }).values).toEqual([
      'BMW', '42', '2025-06-01', 51,
    ]);
    expect(pageQuery({ scope: 'completed', filters, order, limit: 51, after: { key: null, id: '42' } }).values).toEqual(['BMW', '42', 51]);
    // The total and the data version add no parameter: the total reuses the filters' ones.
    const counted = pageQuery({ scope: 'live', filters, order, limit: 51, after: { key: '2030-01-01T00:00:00.000000Z', id: '5' }, with: 'total' });
    expect(counted.values).toEqual(['BMW', '5', '2030-01-01T00:00:00.000000Z', 51]);
    expect(pageQuery({ scope: 'completed', filters, order, limit: 50, with: 'data_version' }).values).toEqual(['BMW', 50]);
  });

  it('escapes LIKE wildcards in keywords and binds the pattern once for title and description', () => {
    expect(escapeLike('100%_a\\b')).toBe('100\\%\\_a\\\\b');
    expect(countQuery('completed', { keyword: '50%' }).values).toEqual(['%50\\%%', '%50\\%%']);
    expect(countQuery('live', { keyword: '50%' }).values).toEqual(['%50\\%%']);
  });

  it('binds description token lookups for counts and collecting pages, none for a page that walks', () => {
    const expected = ['%matching numbers%', '%matching', 'numbers%'];
    expect(countQuery('completed', { keyword: 'matching numbers' }).values).toEqual(expected);
    const request: PageRequest = { scope: 'completed', filters: { keyword: 'matching numbers' }, order: { sort: 'date', direction: 'desc' }, limit: 50 };
    expect(pageQuery({ ...request, keywordStrategy: 'bitmap' }).values).toEqual([...expected, 50]);
    expect(pageQuery(request).values).toEqual([...expected, 50]);
    expect(pageQuery({ ...request, keywordStrategy: 'walk' }).values).toEqual(['%matching numbers%', 50]);
    // Live rows have trigram indexes of their own: no token lookups.
    expect(countQuery('live', { keyword: 'matching numbers' }).values).toEqual(['%matching numbers%']);
  });

  it('rechecks descriptions only for keywords of several fragments: a one-fragment token lookup is exact', () => {
    expect(countQuery('completed', { keyword: 'numbers' }).text).not.toMatch(/description ILIKE/);
    expect(countQuery('completed', { keyword: 'numbers' }).text).toMatch(/description_tokens WHERE token ILIKE/);
    expect(countQuery('completed', { keyword: 'matching numbers' }).text).toMatch(/description ILIKE/);
    // A walking page tests rows itself.
    const request: PageRequest = { scope: 'completed', filters: { keyword: 'numbers' }, order: { sort: 'date', direction: 'desc' }, limit: 50 };
    expect(pageQuery({ ...request, keywordStrategy: 'walk' }).text).toMatch(/description ILIKE/);
  });

  it('derives one vocabulary pattern per fragment from where the keyword has spaces', () => {
    // One fragment: a token containing it.
    expect(descriptionTokenPatterns('atching')).toEqual(['%atching%']);
    // First fragment ends a token, middle ones are whole tokens, the last starts one.
    expect(descriptionTokenPatterns('engine, 100% docs')).toEqual(['%engine,', '100\\%', 'docs%']);
    // Leading or trailing spaces bound the fragment next to them.
    expect(descriptionTokenPatterns(' dino ')).toEqual(['dino']);
    expect(descriptionTokenPatterns('dino  gt')).toEqual(['%dino']);
    // Fragments under three characters are not looked up.
    expect(descriptionTokenPatterns('a b')).toEqual([]);
    expect(descriptionTokenPatterns('V12 is ok')).toEqual(['%V12']);
    expect(keywordIndexable('V12 is ok')).toBe(true);
    expect(keywordIndexable('a b c')).toBe(false);
    expect(keywordIndexable('gt')).toBe(false);
  });

  it('gives one cache key per filter set, whatever the member order', () => {
    expect(filtersKey('completed', { make: 'A', year_min: 1, model: undefined })).toBe(
      filtersKey('completed', { year_min: 1, make: 'A' }),
    );
    expect(filtersKey('completed', { make: 'A' })).not.toBe(filtersKey('live', { make: 'A' }));
    expect(filtersKey('completed', { make: 'A' })).not.toBe(filtersKey('completed', { model: 'A' }));
  });

  it('walks the sort index for dense keyword matches and collects sparse ones through the indexes', () => {
    // 1M rows, first page of 50: walking costs ~50M/matches row checks, collecting ~matches.
    expect(keywordStrategy(380_000, 1_000_000, 50, 'automatic')).toBe('walk');
    expect(keywordStrategy(17_000, 1_000_000, 50, 'concours')).toBe('walk');
    expect(keywordStrategy(2_000, 1_000_000, 50, 'testarossa')).toBe('bitmap');
    expect(keywordStrategy(0, 1_000_000, 50, 'nothing')).toBe('bitmap');
    // Deep pages need more rows: collecting wins earlier.
    expect(keywordStrategy(17_000, 1_000_000, 10_000, 'concours')).toBe('bitmap');
    // One or two characters have no trigram to look up, nor fragments this short a token.
    expect(keywordStrategy(10, 1_000_000, 50, 'gt')).toBe('walk');
    expect(keywordStrategy(10, 1_000_000, 50, 'a b c')).toBe('walk');
  });
});
