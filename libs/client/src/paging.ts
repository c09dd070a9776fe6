/** A page of a list route that pages by cursor (`/auctions`, `/auctions/live`, bids). */
export interface CursorPage<T> {
  data: T[];
  meta: { next_cursor: string | null };
}

export interface CursorQuery {
  page?: number;
  pagination?: 'page' | 'cursor';
  cursor?: string;
}

/**
 * Every item of a cursor-paged list, page after page, down to the last (`next_cursor` null).
 * The first request is the query as given — in cursor mode unless it names a `page` or a
 * `cursor` — and each next one is the same query with `cursor` = the previous `next_cursor`.
 * Pages are fetched as the caller consumes them.
 */
export async function* itemsByCursor<Q extends CursorQuery, T>(query: Q, fetchPage: (query: Q) => Promise<CursorPage<T>>): AsyncGenerator<T, void, undefined> {
  const { page: _page, pagination: _pagination, cursor: _cursor, ...filters } = query;
  let next: Q = query.page === undefined && query.cursor === undefined ? { ...query, pagination: 'cursor' } : query;
  const seen = new Set<string>();
  for (;;) {
    const page = await fetchPage(next);
    yield* page.data;
    const cursor = page.meta.next_cursor;
    if (!cursor || page.data.length === 0) return;
    if (seen.has(cursor)) throw new Error(`the API sent the cursor ${cursor} twice: stopping rather than looping`);
    seen.add(cursor);
    next = { ...filters, pagination: 'cursor', cursor } as Q;
  }
}

/** A page of a list route that pages by number (`/webhooks`). */
export interface NumberedPage<T> {
  data: T[];
  meta: { page: number; total_pages: number };
}

/**
 * Every item of a page-numbered list, from `query.page` (default 1) to the last page. Items are
 * listed newest first, so one created meanwhile shifts the rest by one: an item seen on one page
 * is not yielded again from the next.
 */
export async function* itemsByPage<Q extends { page?: number }, T extends { id: string }>(
  query: Q,
  fetchPage: (query: Q) => Promise<NumberedPage<T>>,
): AsyncGenerator<T, void, undefined> {
  const seen = new Set<string>();
  for (let number = query.page ?? 1; ; number += 1) {
    const page = await fetchPage({ ...query, page: number });
    for (const item of page.data) {
      if (seen.has(item.id)) continue;
      seen.add(item.id);
      yield item;
    }
    if (page.data.length === 0 || number >= page.meta.total_pages) return;
  }
}
