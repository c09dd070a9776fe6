import { AuctionOrder, countQuery, pageQuery, SORT_COLUMNS } from '@cars/service-query';
import { openTestDataSource } from '@cars/testing';
import { DataSource } from 'typeorm';

/**
 * Migration StatisticsScope switches off statistics of `auctions` columns that no query filters
 * or sorts by. A column a query starts to filter by (a new `mileage` filter, say) would then be
 * planned blind: this spec fails first.
 */
describe('statistics of auctions', () => {
  let db: DataSource;

  beforeAll(async () => {
    db = await openTestDataSource();
  });

  afterAll(async () => {
    await db?.destroy();
  });

  it('are kept for every column the auction routes filter or sort by', async () => {
    const rows = (await db.query(
      `SELECT attname FROM pg_attribute
        WHERE attrelid = 'auctions'::regclass AND attnum > 0 AND NOT attisdropped AND attstattarget = 0`,
    )) as { attname: string }[];
    const blind = new Set(rows.map((r) => r.attname));
    expect(blind.size).toBeGreaterThan(0);

    // Every filter but `keyword`: title and description are searched with ILIKE '%kw%', which no
    // statistics estimate (their target is 0 on purpose).
    const everyFilter = {
      make: 'A', model: 'B', vin: 'V', seller_username: 'S', year_min: 1, year_max: 2, price_min: 1, price_max: 2,
      status: 'sold', source: 'hagerty', ending_after: '2026-01-01T00:00:00Z', ending_before: '2026-01-02T00:00:00Z',
      updated_since: '2026-01-01T00:00:00Z',
    };
    const statements = [
      countQuery('completed', everyFilter).text,
      countQuery('live', everyFilter).text,
      ...Object.keys(SORT_COLUMNS).flatMap((sort) =>
        (['asc', 'desc'] as const).map(
          (direction) => pageQuery({ scope: 'completed', filters: {}, order: { sort, direction } as AuctionOrder, limit: 1 }).text,
        ),
      ),
    ];
    // The WHERE and ORDER BY parts; the item projection returns every column and does not count.
    const withoutProjection = (sql: string) => {
      const start = sql.indexOf('CROSS JOIN LATERAL');
      return start < 0 ? sql : sql.slice(0, start) + sql.slice(sql.lastIndexOf(') item') + ') item'.length);
    };
    const conditions = statements
      .map(withoutProjection)
      .flatMap((sql) => sql.split(/\b(?:WHERE|ORDER BY)\b/).slice(1))
      .join(' ');
    expect(conditions).toContain('ocd_model_name');
    const used = [...blind].filter((column) => new RegExp(`\\b${column}\\b`).test(conditions));
    expect(used).toEqual([]);
  });
});
