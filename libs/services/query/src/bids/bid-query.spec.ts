import { SqlQuery } from '../auctions/auction-query';
import { BidsPageRequest, bidsPageQuery, bidsTotalQuery } from './bid-query';

/**
 * The statements' results (order, nulls last, bounds, totals, 404 versus an empty page) are the
 * subject of bids.repository.integration-spec.ts against PostgreSQL. Here: what can be known
 * without a database — every value travels as a bind parameter, placeholders are numbered without
 * gaps, and each request's values are the ones bound.
 */
const HOSTILE = `1' OR '1'='1`;

function placeholders(query: SqlQuery): number[] {
  return [...new Set([...query.text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])))].sort((a, b) => a - b);
}

function expectBoundNotSpliced(query: SqlQuery): void {
  expect(placeholders(query)).toEqual(query.values.map((_, i) => i + 1));
  for (const value of query.values) if (typeof value === 'string') expect(query.text).not.toContain(value);
}

describe('bid SQL', () => {
  const base: BidsPageRequest = { auctionId: HOSTILE, sort: 'bid_at', direction: 'asc', limit: 100, offset: 0 };
  const bounded: BidsPageRequest = { ...base, bidAfter: `${HOSTILE} after`, bidBefore: `${HOSTILE} before` };
  const variants: [string, BidsPageRequest][] = [
    ['no bounds', base],
    ['a lower bound', { ...base, bidAfter: `${HOSTILE} after` }],
    ['an upper bound', { ...base, bidBefore: `${HOSTILE} before` }],
    ['both bounds, by amount descending, deep', { ...bounded, sort: 'amount', direction: 'desc', offset: 200 }],
    ['by creation', { ...base, sort: 'created' }],
  ];

  it.each(variants)('binds every value of the page statement, spliced into nothing: %s', (_name, request) => {
    expectBoundNotSpliced(bidsPageQuery(request));
  });

  it.each(variants)('binds every value of the total statement, spliced into nothing: %s', (_name, request) => {
    expectBoundNotSpliced(bidsTotalQuery(request));
  });

  it('binds the auction, the bounds in order, then the page size and offset', () => {
    const request = { ...bounded, limit: 25, offset: 50 };
    expect(bidsPageQuery(request).values).toEqual([HOSTILE, `${HOSTILE} after`, `${HOSTILE} before`, 25, 50]);
    expect(bidsTotalQuery(request).values).toEqual([HOSTILE, `${HOSTILE} after`, `${HOSTILE} before`]);
  });

  it('orders by the chosen column in the chosen direction, ties by id the same way', () => {
    const amountDesc = bidsPageQuery({ ...base, sort: 'amount', direction: 'desc' }).text;
    expect(amountDesc).toContain('ORDER BY b.amount DESC NULLS LAST, b.id DESC');
    const createdAsc = bidsPageQuery({ ...base, sort: 'created' }).text;
    expect(createdAsc).toContain('ORDER BY b.created_at ASC NULLS LAST, b.id ASC');
  });
});
