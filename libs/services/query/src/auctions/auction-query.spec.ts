import {
  countQuery,
  descriptionTokenPatterns,
  escapeLike,
  filtersKey,
  keywordIndexable,
  keywordStrategy,
  pageQuery,
} from './auction-query';

describe('auction SQL', () => {
  it('binds every filter as a parameter, with the scope first', () => {
    const { text, values } = countQuery('completed', {
      make: 'Porsche',
      model: '911',
      vin: 'WP0',
      seller_username: 'x',
      year_min: 1960,
      year_max: 1970,
      price_min: 1,
      price_max: 2,
      status: 'bid to',
      source: 'hagerty',
      keyword: 'gt',
    });
    expect(text).toBe(
      'SELECT count(*)::int AS total FROM auctions WHERE NOT is_live AND ocd_make_name = $1 AND ocd_model_name = $2 ' +
        'AND vin = $3 AND seller_username = $4 AND auction_status = $5 AND source = $6 AND year >= $7 AND year <= $8 ' +
        'AND price >= $9 AND price <= $10 AND (title ILIKE $11 OR description ILIKE $11)',
    );
    expect(values).toEqual(['Porsche', '911', 'WP0', 'x', 'bid to', 'hagerty', 1960, 1970, 1, 2, '%gt%']);
  });

  it('scopes live auctions and casts instants', () => {
    const { text, values } = countQuery('live', {
      ending_after: '2030-01-01T00:00:00Z',
      ending_before: '2030-01-02T00:00:00+01:00',
      updated_since: '2029-12-31T00:00:00Z',
    });
    expect(text).toBe(
      'SELECT count(*)::int AS total FROM auctions WHERE is_live AND auction_end_at >= $1::timestamptz ' +
        'AND auction_end_at <= $2::timestamptz AND updated_at >= $3::timestamptz',
    );
    expect(values).toHaveLength(3);
  });

  it('escapes LIKE wildcards in keywords', () => {
    expect(escapeLike('100%_a\\b')).toBe('100\\%\\_a\\\\b');
    expect(countQuery('completed', { keyword: '50%' }).values).toEqual(['%50\\%%', '%50\\%%']);
    expect(countQuery('live', { keyword: '50%' }).values).toEqual(['%50\\%%']);
  });

  it('finds description candidates through the token vocabulary, then tests ILIKE on each', () => {
    const { text, values } = countQuery('completed', { keyword: 'matching numbers' });
    expect(text).toBe(
      'SELECT count(*)::int AS total FROM auctions WHERE NOT is_live AND (title ILIKE $1 OR (' +
        "string_to_array(description, ' ') && (SELECT coalesce(array_agg(token), '{}') FROM description_tokens WHERE token ILIKE $2) AND " +
        "string_to_array(description, ' ') && (SELECT coalesce(array_agg(token), '{}') FROM description_tokens WHERE token ILIKE $3) AND " +
        'description ILIKE $1))',
    );
    expect(values).toEqual(['%matching numbers%', '%matching', 'numbers%']);
    // A page that walks the sort index tests rows one by one: no lookups.
    const walk = pageQuery({
      scope: 'completed',
      filters: { keyword: 'matching numbers' },
      order: { sort: 'date', direction: 'desc' },
      limit: 50,
      keywordStrategy: 'walk',
    });
    expect(walk.text).not.toContain('description_tokens');
    expect(walk.text).toContain('(title ILIKE $1 OR description ILIKE $1)');
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

  it('orders by the sort column with nulls last and the id tiebreaker, then reads rows by id', () => {
    const { text, values } = pageQuery({
      scope: 'completed',
      filters: { make: 'BMW' },
      order: { sort: 'price', direction: 'asc' },
      limit: 50,
      offset: 100,
    });
    expect(text).toContain(
      'FROM (SELECT id FROM auctions WHERE NOT is_live AND ocd_make_name = $1 ORDER BY price ASC NULLS LAST, id ASC LIMIT $2 OFFSET $3) page',
    );
    expect(text).toContain('JOIN auctions a ON a.id = page.id CROSS JOIN LATERAL (SELECT a.id AS id,');
    expect(text).toContain(') item ORDER BY a.price ASC NULLS LAST, a.id ASC');
    expect(text).toContain('a.price::text AS sort_key');
    expect(text).not.toContain('a.updated_at');
    expect(values).toEqual(['BMW', 50, 100]);
  });

  it('adds updated_at for live items and an exact text key for timestamps', () => {
    const { text } = pageQuery({ scope: 'live', filters: {}, order: { sort: 'ending', direction: 'asc' }, limit: 10 });
    expect(text).toContain('a.updated_at');
    expect(text).toContain(`to_char(a.auction_end_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS sort_key`);
    expect(text).not.toContain('OFFSET');
  });

  it('continues after a keyset position with a row comparison, or inside the nulls tail', () => {
    const after = pageQuery({
      scope: 'completed',
      filters: { source: 'hemmings' },
      order: { sort: 'date', direction: 'desc' },
      limit: 51,
      after: { key: '2025-06-01', id: '42' },
    });
    expect(after.text).toContain('AND (auction_end_date, id) < ($3::date, $2::bigint) ORDER BY auction_end_date DESC NULLS LAST, id DESC LIMIT $4');
    expect(after.values).toEqual(['hemmings', '42', '2025-06-01', 51]);

    const asc = pageQuery({
      scope: 'completed',
      filters: {},
      order: { sort: 'year', direction: 'asc' },
      limit: 5,
      after: { key: '1967', id: '7' },
    });
    expect(asc.text).toContain('(year, id) > ($2::integer, $1::bigint)');

    const tail = pageQuery({
      scope: 'completed',
      filters: {},
      order: { sort: 'price', direction: 'desc' },
      limit: 5,
      after: { key: null, id: '9' },
    });
    expect(tail.text).toContain('AND price IS NULL AND id < $1::bigint');

    const nulls = pageQuery({
      scope: 'completed',
      filters: {},
      order: { sort: 'bids', direction: 'asc' },
      limit: 3,
      nullsOnly: true,
    });
    expect(nulls.text).toContain('WHERE NOT is_live AND bid_count IS NULL ORDER BY bid_count ASC NULLS LAST, id ASC');
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

  it('brings the data version or the exact total along on every row of a page', () => {
    const versioned = pageQuery({
      scope: 'completed',
      filters: { make: 'BMW' },
      order: { sort: 'date', direction: 'desc' },
      limit: 50,
      with: 'data_version',
    });
    expect(versioned.text).toContain(
      'AS sort_key, (SELECT coalesce(sum(version), 0)::text FROM auction_data_version) AS data_version FROM',
    );
    const counted = pageQuery({
      scope: 'live',
      filters: { make: 'BMW' },
      order: { sort: 'ending', direction: 'asc' },
      limit: 51,
      after: { key: '2030-01-01T00:00:00.000000Z', id: '5' },
      with: 'total',
    });
    // The total counts the filters only, not the keyset position.
    expect(counted.text).toContain('(SELECT count(*)::int FROM auctions WHERE is_live AND ocd_make_name = $1) AS total');
    expect(counted.text).toContain('(auction_end_at, id) > ($3::timestamptz, $2::bigint)');
  });
});
