import { bidsPageQuery, bidsTotalQuery } from './bid-query';

describe('bid SQL', () => {
  const base = { auctionId: '42', sort: 'bid_at', direction: 'asc', limit: 100, offset: 0 } as const;

  it('pages one auction by the sort column, nulls last, ties by id', () => {
    const { text, values } = bidsPageQuery({ ...base, sort: 'amount', direction: 'desc', offset: 200 });
    expect(text).toMatch(
      /^SELECT row_to_json\(item\)::text AS item, b\.id::text AS id, \(SELECT count\(\*\)::int FROM bids WHERE auction_id = \$1::bigint\) AS total FROM bids b CROSS JOIN LATERAL \(SELECT b.id AS id, b.auction_id AS auction_id, /,
    );
    expect(text).toContain('WHERE b.auction_id = $1::bigint ORDER BY b.amount DESC NULLS LAST, b.id DESC LIMIT $2 OFFSET $3');
    expect(values).toEqual(['42', 100, 200]);
  });

  it('bounds bid_at inclusively and counts in the same statement as the existence check', () => {
    const request = { ...base, bidAfter: '2026-01-01T00:00:00Z', bidBefore: '2026-01-02T00:00:00Z' };
    const page = bidsPageQuery(request).text;
    expect(page).toContain('AND b.bid_at >= $2::timestamptz AND b.bid_at <= $3::timestamptz ORDER BY b.bid_at ASC');
    expect(page).toContain('(SELECT count(*)::int FROM bids WHERE auction_id = $1::bigint AND bid_at >= $2::timestamptz AND bid_at <= $3::timestamptz) AS total');
    const total = bidsTotalQuery(request);
    expect(total.text).toBe(
      'SELECT EXISTS (SELECT 1 FROM auctions WHERE id = $1::bigint) AS found, (SELECT count(*)::int FROM bids ' +
        'WHERE auction_id = $1::bigint AND bid_at >= $2::timestamptz AND bid_at <= $3::timestamptz) AS total',
    );
    expect(total.values).toEqual(['42', '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z']);
  });
});
