import { AuctionSort, LiveAuctionSort, SortDirection } from '@cars/contracts';
import { PlannerSettings } from '../sql/sql-client';
import { AUCTION_FIELDS, jsonFields, LIVE_AUCTION_FIELDS } from './auction.projection';

/**
 * SQL of the auction routes, built from validated, normalized input only. Every value travels as
 * a bind parameter; identifiers come from the closed tables below. Pure: unit-tested without a
 * database, and shared with the query benchmark's bare baseline.
 */

/** `completed` = GET /auctions (`NOT is_live`), `live` = GET /auctions/live (`is_live`). */
export type AuctionScope = 'completed' | 'live';

/** Normalized filters: absent members are absent, never null. */
export interface AuctionFilters {
  make?: string;
  model?: string;
  vin?: string;
  seller_username?: string;
  year_min?: number;
  year_max?: number;
  price_min?: number;
  price_max?: number;
  status?: string;
  source?: string;
  keyword?: string;
  /** Instants as RFC 3339 strings with an explicit offset. */
  ending_after?: string;
  ending_before?: string;
  updated_since?: string;
}

type SortType = 'date' | 'timestamptz' | 'bigint' | 'integer';

interface SortColumn {
  column: string;
  type: SortType;
  /** Whether the column can be null (a keyset page then continues into the nulls tail). */
  nullable: boolean;
}

/** Public sort names → column (the migration QueryIndexes has one index per column and direction). */
export const SORT_COLUMNS: Record<AuctionSort | LiveAuctionSort, SortColumn> = {
  date: { column: 'auction_end_date', type: 'date', nullable: true },
  ending: { column: 'auction_end_at', type: 'timestamptz', nullable: true },
  created: { column: 'created_at', type: 'timestamptz', nullable: false },
  updated: { column: 'updated_at', type: 'timestamptz', nullable: false },
  price: { column: 'price', type: 'bigint', nullable: true },
  year: { column: 'year', type: 'integer', nullable: true },
  bids: { column: 'bid_count', type: 'integer', nullable: true },
};

export interface AuctionOrder {
  sort: AuctionSort | LiveAuctionSort;
  direction: SortDirection;
}

/** Position after the last item of a page: its sort value (text form, null = in the nulls tail) and id. */
export interface KeysetPosition {
  key: string | null;
  id: string;
}

export interface SqlQuery {
  text: string;
  values: unknown[];
}

/** Bind parameters in order. */
class Params {
  readonly values: unknown[] = [];

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** The data version of `auctions`: the sum of the counter rows bumped by the triggers of migration QueryIndexes. */
const DATA_VERSION_SUM = `SELECT coalesce(sum(version), 0)::text FROM auction_data_version`;

/** `%`, `_` and `\` in a keyword are literal characters. */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * `tokens`: look description keywords up through the token index (for counts and `bitmap`
 * pages); a `walk` page tests rows one by one, where the lookups would only add work.
 */
function whereClause(scope: AuctionScope, filters: AuctionFilters, params: Params, tokens: boolean, alias = ''): string[] {
  const c = (column: string) => `${alias}${column}`;
  const where = [scope === 'live' ? c('is_live') : `NOT ${c('is_live')}`];
  const equal: [keyof AuctionFilters, string][] = [
    ['make', 'ocd_make_name'],
    ['model', 'ocd_model_name'],
    ['vin', 'vin'],
    ['seller_username', 'seller_username'],
    ['status', 'auction_status'],
    ['source', 'source'],
  ];
  for (const [name, column] of equal) {
    if (filters[name] !== undefined) where.push(`${c(column)} = ${params.add(filters[name])}`);
  }
  const bounds: [keyof AuctionFilters, string, '>=' | '<=', string][] = [
    ['year_min', 'year', '>=', ''],
    ['year_max', 'year', '<=', ''],
    ['price_min', 'price', '>=', ''],
    ['price_max', 'price', '<=', ''],
    ['ending_after', 'auction_end_at', '>=', '::timestamptz'],
    ['ending_before', 'auction_end_at', '<=', '::timestamptz'],
    ['updated_since', 'updated_at', '>=', '::timestamptz'],
  ];
  for (const [name, column, op, cast] of bounds) {
    if (filters[name] !== undefined) where.push(`${c(column)} ${op} ${params.add(filters[name])}${cast}`);
  }
  if (filters.keyword !== undefined) {
    const pattern = params.add(`%${escapeLike(filters.keyword)}%`);
    // Completed rows: the token index narrows descriptions to candidates, ILIKE decides.
    const lookups = tokens && scope === 'completed' ? descriptionTokenPatterns(filters.keyword) : [];
    const candidates = lookups.map(
      (p) =>
        `string_to_array(${c('description')}, ' ') && ` +
        `(SELECT coalesce(array_agg(token), '{}') FROM description_tokens WHERE token ILIKE ${params.add(p)})`,
    );
    const test = `${c('description')} ILIKE ${pattern}`;
    // One fragment (no space): a description contains it exactly when one of its tokens does, so
    // the token lookup is the answer and no row is rechecked (a keyword found in every description
    // otherwise costs an ILIKE over each: 6× the count's time at 120k auctions).
    const exact = candidates.length === 1 && !filters.keyword.includes(' ');
    const description = candidates.length === 0 ? test : exact ? candidates[0] : `(${[...candidates, test].join(' AND ')})`;
    where.push(`(${c('title')} ILIKE ${pattern} OR ${description})`);
  }
  return where;
}

/** Fragments shorter than this are not looked up (no trigram to find them by, and too broad to narrow). */
const MIN_TOKEN_FRAGMENT = 3;

/**
 * The vocabulary lookups (`description_tokens`, migration DescriptionTokens) that find every
 * description containing `keyword`. Split on spaces, the keyword `f1 f2 … fn` occurs only where a
 * token ends with f1, tokens equal f2 … f(n-1) and a token starts with fn (n = 1: a token contains
 * f1), case-insensitively: one ILIKE pattern per fragment long enough to look up. Empty when no
 * fragment is (the description is then only tested row by row).
 */
export function descriptionTokenPatterns(keyword: string): string[] {
  const parts = keyword.split(' ');
  return parts.flatMap((part, i) => {
    if ([...part].length < MIN_TOKEN_FRAGMENT) return [];
    const start = i > 0 ? '' : '%'; // preceded by a space: a token starts with it
    const end = i < parts.length - 1 ? '' : '%'; // followed by a space: a token ends with it
    return [`${start}${escapeLike(part)}${end}`];
  });
}

/** Whether a keyword filter of GET /auctions can be answered through indexes (title trigrams, description tokens). */
export function keywordIndexable(keyword: string): boolean {
  return [...keyword].length >= 3 && descriptionTokenPatterns(keyword).length > 0;
}

function orderBy(order: AuctionOrder, alias = ''): string {
  const { column } = SORT_COLUMNS[order.sort];
  const dir = order.direction === 'asc' ? 'ASC' : 'DESC';
  return `${alias}${column} ${dir} NULLS LAST, ${alias}id ${dir}`;
}

/** The sort value in an exact, castable text form (timestamps to the microsecond). */
function keyText(order: AuctionOrder, alias: string): string {
  const { column, type } = SORT_COLUMNS[order.sort];
  switch (type) {
    case 'date':
      return `to_char(${alias}${column}, 'YYYY-MM-DD')`;
    case 'timestamptz':
      return `to_char(${alias}${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
    case 'bigint':
    case 'integer':
      return `${alias}${column}::text`;
  }
}

function itemFields(scope: AuctionScope): string {
  return jsonFields(scope === 'live' ? { ...AUCTION_FIELDS, ...LIVE_AUCTION_FIELDS } : AUCTION_FIELDS);
}

export interface PageRequest {
  scope: AuctionScope;
  filters: AuctionFilters;
  order: AuctionOrder;
  limit: number;
  /** Offset paging. */
  offset?: number;
  /** Keyset paging: rows strictly after this position. */
  after?: KeysetPosition;
  /** Keyset paging: only the rows whose sort value is null (the tail of every order). */
  nullsOnly?: boolean;
  /**
   * Also answer, in the same round trip (each an InitPlan evaluated once, not a window count):
   * `data_version` — the data version, for the count cache of /auctions; `total` — the exact
   * count of the filters (for the small live set). Both arrive on every row, so not with an
   * empty page.
   */
  with?: 'data_version' | 'total';
  /** How a keyword filter of /auctions finds its rows (default: through the indexes). */
  keywordStrategy?: KeywordStrategy;
}

/**
 * One page of items. The ids of the page are found first (the ordered index range, skipping
 * `offset` entries without reading the wide rows), then the 50-odd rows are read by primary key
 * and serialized: `item` is the item's JSON text, `sort_key` the row's sort value for the next
 * cursor.
 */
export function pageQuery(request: PageRequest): SqlQuery {
  const params = new Params();
  const filters = whereClause(request.scope, request.filters, params, request.keywordStrategy !== 'walk');
  const where = [...filters];
  const { column, type } = SORT_COLUMNS[request.order.sort];
  const desc = request.order.direction === 'desc';
  if (request.after) {
    const id = params.add(request.after.id);
    if (request.after.key === null) {
      where.push(`${column} IS NULL`, `id ${desc ? '<' : '>'} ${id}::bigint`);
    } else {
      // A row comparison is an index condition on (column, id): the page starts right there.
      where.push(`(${column}, id) ${desc ? '<' : '>'} (${params.add(request.after.key)}::${type}, ${id}::bigint)`);
    }
  } else if (request.nullsOnly) {
    where.push(`${column} IS NULL`);
  }
  const limit = params.add(request.limit);
  const offset = request.offset ? ` OFFSET ${params.add(request.offset)}` : '';
  const extra =
    request.with === 'data_version'
      ? `, (${DATA_VERSION_SUM}) AS data_version`
      : request.with === 'total'
        ? `, (SELECT count(*)::int FROM auctions WHERE ${filters.join(' AND ')}) AS total`
        : '';
  const text =
    `SELECT row_to_json(item)::text AS item, a.id::text AS id, ${keyText(request.order, 'a.')} AS sort_key${extra} ` +
    `FROM (SELECT id FROM auctions WHERE ${where.join(' AND ')} ORDER BY ${orderBy(request.order)} LIMIT ${limit}${offset}) page ` +
    `JOIN auctions a ON a.id = page.id CROSS JOIN LATERAL (SELECT ${itemFields(request.scope)}) item ` +
    `ORDER BY ${orderBy(request.order, 'a.')}`;
  return { text, values: params.values };
}

/** The exact number of items matching the filters (a separate statement, never a window count). */
export function countQuery(scope: AuctionScope, filters: AuctionFilters): SqlQuery {
  const params = new Params();
  const where = whereClause(scope, filters, params, true);
  return { text: `SELECT count(*)::int AS total FROM auctions WHERE ${where.join(' AND ')}`, values: params.values };
}

/** The data version and the planner's row estimate of `auctions` (for keyword strategies), in one round trip. */
export const DATA_VERSION_QUERY: SqlQuery = {
  text:
    `SELECT (${DATA_VERSION_SUM}) AS version, ` +
    `(SELECT greatest(reltuples, 1)::float8 FROM pg_class WHERE oid = 'auctions'::regclass) AS rows`,
  values: [],
};

/**
 * How to find the rows of a keyword filter. The planner cannot estimate `ILIKE '%kw%'` (a keyword
 * matching 2% of rows is estimated at ~0.02%), so with the exact number of matches known (the
 * count comes first for keyword filters) the choice is made here:
 * - `walk`: read the sort index in order and test each row; costs about needed × rows / matches
 *   row checks — cheap when matches are dense (a broad keyword);
 * - `bitmap`: collect every match through the title trigram and description token indexes, then
 *   sort; costs about `matches` row checks — cheap when they are few (a selective keyword).
 */
export type KeywordStrategy = 'walk' | 'bitmap';

export function keywordStrategy(matches: number, scopeRows: number, rowsNeeded: number, keyword: string): KeywordStrategy {
  // Validation refuses such keywords (KeywordParam: a part of 3+ characters), so a walk is only
  // ever chosen for dense matches; every statement is bounded by the statement timeout anyway.
  if (!keywordIndexable(keyword)) return 'walk'; // nothing to look up
  return matches * matches > rowsNeeded * scopeRows ? 'walk' : 'bitmap';
}

/**
 * JIT is off wherever settings are given: disabling paths inflates cost estimates past
 * jit_above_cost, and compiling costs 20–50 ms that a 50-row page never wins back.
 */
export const KEYWORD_STRATEGY_SETTINGS: Record<KeywordStrategy, PlannerSettings> = {
  walk: { enable_bitmapscan: 'off', enable_seqscan: 'off', jit: 'off' },
  bitmap: { enable_indexscan: 'off', enable_seqscan: 'off', jit: 'off' },
};

/** Counts (cache misses) run without JIT: they are index scans that compiling only slows down. */
export const COUNT_SETTINGS: PlannerSettings = { jit: 'off' };

/**
 * Counting a keyword filter: through the title trigram and description token indexes (never a
 * sequential scan of the table),
 * with a bitmap large enough to stay exact (not lossy) for a broad keyword.
 */
export const KEYWORD_COUNT_SETTINGS: PlannerSettings = { ...COUNT_SETTINGS, enable_seqscan: 'off', work_mem: '64MB' };

/**
 * Canonical text of a filter set (members sorted, absent ones left out): the count-cache key and
 * part of what a cursor is bound to.
 */
export function filtersKey(scope: AuctionScope, filters: AuctionFilters): string {
  const entries = Object.entries(filters)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([scope, entries]);
}
