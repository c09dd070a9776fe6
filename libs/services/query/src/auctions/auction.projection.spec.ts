import { AUCTION_FIELDS, BID_FIELDS, jsonFields, LIVE_AUCTION_FIELDS, pageJson } from './auction.projection';

describe('response projection', () => {
  it('selects every contract field in the contract\'s order, named after it', () => {
    const sql = jsonFields(AUCTION_FIELDS);
    expect(sql.startsWith('a.id AS id, a.source AS source, a.url AS url,')).toBe(true);
    expect(sql.endsWith(`'unique_bidder_count', a.unique_bidder_count) AS stats`)).toBe(true);
    expect(Object.keys(AUCTION_FIELDS)).toHaveLength(42);
    expect(Object.keys({ ...AUCTION_FIELDS, ...LIVE_AUCTION_FIELDS })).toHaveLength(44);
  });

  it('formats instants as ISO 8601 UTC with Z and dates as YYYY-MM-DD, arrays never null', () => {
    expect(AUCTION_FIELDS.auction_end_at).toBe(`to_char(a.auction_end_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);
    expect(AUCTION_FIELDS.auction_end_date).toBe(`to_char(a.auction_end_date, 'YYYY-MM-DD')`);
    expect(AUCTION_FIELDS.modifications).toBe(`coalesce(a.modifications, '{}'::text[])`);
    expect(LIVE_AUCTION_FIELDS.image_url).toBe('a.featured_image_url');
    expect(BID_FIELDS.bid_at).toContain(`AT TIME ZONE 'UTC'`);
  });

  it('refuses field names that are not plain identifiers', () => {
    expect(() => jsonFields({ 'x; DROP TABLE auctions': 'a.id' })).toThrow();
  });

  it('wraps serialized items in the paginated envelope', () => {
    const meta = { total: 2, page: 1, limit: 50, total_pages: 1, has_more: false, next_cursor: null };
    const body = pageJson(['{"id":1}', '{"id":2}'], meta);
    expect(JSON.parse(body)).toEqual({ data: [{ id: 1 }, { id: 2 }], meta });
    expect(JSON.parse(pageJson([], { ...meta, total: 0, total_pages: 0 })).data).toEqual([]);
  });
});
