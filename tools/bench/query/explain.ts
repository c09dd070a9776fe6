import { LiveAuctionsQueryDto, SearchAuctionsQueryDto, validatePlain } from '@cars/contracts';
import {
  AuctionFilters,
  bidsPageQuery,
  bidsTotalQuery,
  completedFilters,
  COUNT_SETTINGS,
  countQuery,
  KEYWORD_COUNT_SETTINGS,
  KEYWORD_STRATEGY_SETTINGS,
  keywordStrategy,
  liveFilters,
  localSettings,
  pageQuery,
  PlannerSettings,
  SqlQuery,
} from '@cars/service-query';
import { rows, withTransaction } from '@cars/persistence';
import { Pool } from 'pg';

export interface ExplainedStatement {
  label: string;
  plan: string;
  /** Execution time of the statement as EXPLAIN ANALYZE measured it (uncached). */
  ms: number;
  seqScanOnAuctions: boolean;
}

interface Statement {
  label: string;
  query: SqlQuery;
  settings?: PlannerSettings;
}

/** The statement as the service runs it: with its planner settings, in a transaction of its own (PgSqlClient.queryWith). */
async function runWith<R>(pool: Pool, query: SqlQuery, settings?: PlannerSettings, prefix = ''): Promise<R[]> {
  const text = `${prefix}${query.text}`;
  if (!settings) return rows<R>(pool, text, query.values);
  return withTransaction(pool, (client) => rows<R>(client, text, query.values), { attempts: 1, settings: localSettings(settings) });
}

/**
 * The statements the query service runs for a request path (the same builders, and the same
 * planner settings: a keyword page's strategy comes from its exact count, as in the service).
 */
export async function statementsFor(pool: Pool, path: string): Promise<Statement[]> {
  const url = new URL(path, 'http://bench');
  const params = Object.fromEntries(url.searchParams.entries());
  const bids = /^\/auctions\/(\d+)\/bids$/.exec(url.pathname);
  if (bids) {
    const request = { auctionId: bids[1], sort: 'bid_at', direction: 'asc', limit: 100, offset: 0 } as const;
    return [
      { label: 'page+total', query: bidsPageQuery(request) },
      { label: 'exists+count (empty pages only)', query: bidsTotalQuery(request) },
    ];
  }
  if (url.pathname === '/auctions/live') {
    const input = validatePlain(LiveAuctionsQueryDto, params);
    if (!input.ok) throw new Error(`${path}: ${JSON.stringify(input.details)}`);
    const filters = liveFilters(input.value);
    const limit = input.value.limit ?? 50;
    const order = { sort: input.value.sort ?? 'ending', direction: input.value.direction ?? 'asc' } as const;
    const offset = ((input.value.page ?? 1) - 1) * limit;
    return [{ label: 'page+total', query: pageQuery({ scope: 'live', filters, order, limit, offset, with: 'total' }) }];
  }
  const input = validatePlain(SearchAuctionsQueryDto, params);
  if (!input.ok) throw new Error(`${path}: ${JSON.stringify(input.details)}`);
  const filters: AuctionFilters = completedFilters(input.value);
  const limit = input.value.limit ?? 50;
  const offset = ((input.value.page ?? 1) - 1) * limit;
  const order = { sort: input.value.sort ?? 'date', direction: input.value.direction ?? 'desc' } as const;
  const count = countQuery('completed', filters);
  if (filters.keyword === undefined) {
    return [
      { label: 'page+version', query: pageQuery({ scope: 'completed', filters, order, limit, offset, with: 'data_version' }) },
      { label: 'count (uncached)', query: count, settings: COUNT_SETTINGS },
    ];
  }
  const [{ total }] = await runWith<{ total: number }>(pool, count, KEYWORD_COUNT_SETTINGS);
  const [{ rows: estimatedRows }] = await runWith<{ rows: number }>(pool, {
    text: `SELECT reltuples::float8 AS rows FROM pg_class WHERE oid = 'auctions'::regclass`,
    values: [],
  });
  const strategy = keywordStrategy(total, estimatedRows, offset + limit, filters.keyword);
  const page = pageQuery({ scope: 'completed', filters, order, limit, offset, keywordStrategy: strategy });
  return [
    { label: `page (${strategy}, ${total} matches)`, query: page, settings: KEYWORD_STRATEGY_SETTINGS[strategy] },
    { label: 'count (uncached)', query: count, settings: KEYWORD_COUNT_SETTINGS },
  ];
}

export async function explain(pool: Pool, path: string): Promise<ExplainedStatement[]> {
  const out: ExplainedStatement[] = [];
  for (const { label, query, settings } of await statementsFor(pool, path)) {
    const lines = await runWith<{ 'QUERY PLAN': string }>(pool, query, settings, 'EXPLAIN (ANALYZE, BUFFERS) ');
    const plan = lines.map((r) => r['QUERY PLAN']).join('\n');
    const ms = Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN);
    out.push({ label, plan, ms, seqScanOnAuctions: /Seq Scan on auctions\b/.test(plan) });
  }
  return out;
}
