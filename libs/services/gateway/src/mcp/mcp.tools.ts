import { RequestMethod, Type } from '@nestjs/common';
import {
  AuctionIdParamDto,
  AuctionListResponseDto,
  BidListResponseDto,
  JsonText,
  ListBidsQueryDto,
  ListModelsQueryDto,
  LiveAuctionListResponseDto,
  LiveAuctionsQueryDto,
  NameListResponse,
  Paginated,
  SearchAuctionsQueryDto,
  StatsQueryDto,
  StatsResponse,
} from '@cars/contracts';
import { ServiceClient } from '@cars/messaging';
import { AuctionsController, listBids, listLiveAuctions, searchAuctions } from '../auctions/auctions.controller';
import { listMakes, listModels, MakesController } from '../makes/makes.controller';
import { InFlightSlot } from '../metering/in-flight';
import { routeMethod, routePath } from '../http/nest-internals';
import { getPriceStats, StatsController } from '../stats/stats.controller';
import { ToolInput, toolInputSchema, ToolInputSchema } from './tool-input';

/** The services behind the tools: the REST routes' own clients. */
export interface McpClients {
  query: ServiceClient;
  stats: ServiceClient;
  /** The HTTP request's place among its account's requests in flight (several-word keyword searches take its lane). */
  inFlight?: InFlightSlot;
}

/**
 * The REST route a tool mirrors. Its decorators decide the tool's rules (`@Metered()` → the call
 * counts, `@RequiresPaidPlan()` → 403 on Free), and the OpenAPI document's parameters of that
 * route must equal the tool's input schema (tests/api/mcp.integration-spec.ts).
 */
export interface RestRoute {
  controller: Type<unknown>;
  handler: string;
}

/** What a tool answers: the REST body's JSON text, the parsed body, and a one-line summary. */
export interface ToolAnswer {
  json: string;
  body: Record<string, unknown>;
  summary: string;
}

export interface McpTool {
  name: string;
  title: string;
  description: string;
  route: RestRoute;
  inputs: readonly ToolInput[];
  inputSchema: ToolInputSchema;
  /** Runs the REST route's call with validated inputs (one DTO instance per input, in order). */
  answer(clients: McpClients, inputs: readonly object[]): Promise<ToolAnswer>;
}

type Instances<T extends readonly ToolInput[]> = { -readonly [K in keyof T]: T[K] extends ToolInput<infer I> ? I : never };

/** The body a route returns: the JSON text the query service serializes, or a value. */
type BodyOf<R> = R extends string ? (R extends JsonText<infer B> ? B : never) : R;

interface ToolSpec<T extends readonly ToolInput[], R> {
  name: string;
  title: string;
  description: string;
  route: RestRoute;
  inputs: T;
  /** The REST route's own call (the shared function of its controller): one query path. */
  call: (clients: McpClients, ...inputs: Instances<T>) => Promise<R>;
  summarize: (body: BodyOf<R>, ...inputs: Instances<T>) => string;
}

function defineTool<const T extends readonly ToolInput[], R extends object | string>(spec: ToolSpec<T, R>): McpTool {
  const { name, title, description, route, inputs } = spec;
  return {
    name,
    title,
    description: `${description}\n\nMirrors ${restRouteName(route)}: same parameters, limits and result JSON.`,
    route,
    inputs,
    inputSchema: toolInputSchema(inputs),
    async answer(clients, values) {
      const args = values as Instances<T>;
      const body = await spec.call(clients, ...args);
      const json = typeof body === 'string' ? body : JSON.stringify(body);
      const parsed = (typeof body === 'string' ? JSON.parse(body) : body) as BodyOf<R>;
      return { json, body: parsed as Record<string, unknown>, summary: spec.summarize(parsed, ...args) };
    },
  };
}

/** "GET /auctions/{auction_id}/bids", from the controller's routing metadata. */
export function restRouteName(route: RestRoute): string {
  const handler = (route.controller.prototype as Record<string, unknown>)[route.handler];
  if (typeof handler !== 'function') throw new Error(`${route.controller.name}.${route.handler} is not a route handler`);
  const method = routeMethod(handler) as RequestMethod;
  const parts = [routePath(route.controller), routePath(handler)] as string[];
  const path = `/${parts.join('/')}`
    .replace(/\/+/g, '/')
    .replace(/\/$/, '')
    .replace(/:(\w+)/g, '{$1}');
  return `${RequestMethod[method]} ${path || '/'}`;
}

const count = (n: number): string => n.toLocaleString('en-US');

/** "12 completed auctions (page 1 of 3, 120 in all). More: …" */
function pageSummary(body: Paginated<unknown>, noun: string): string {
  const { meta } = body;
  if (meta.total === 0) return `0 ${noun} (none match).`;
  const more = meta.has_more ? ' More: pass meta.next_cursor as `cursor` (same other arguments) for the next page.' : '';
  return `${count(body.data.length)} ${noun} (page ${count(meta.page)} of ${count(meta.total_pages)}, ${count(meta.total)} in all).${more}`;
}

function usd(value: number): string {
  return `${value.toLocaleString('en-US', { maximumFractionDigits: 2 })} USD`;
}

function statsSummary(stats: StatsResponse, query: StatsQueryDto): string {
  const years =
    query.year_min !== undefined || query.year_max !== undefined ? `, model years ${query.year_min ?? '…'}–${query.year_max ?? '…'}` : '';
  const scope = `${query.make}${query.model ? ` ${query.model}` : ''}${years}`;
  if (stats.total_sales === 0) return `Pricing statistics of ${scope}: no sales in scope.`;
  return (
    `Pricing statistics of ${scope}: ${count(stats.total_sales)} sales, median ${usd(stats.median_price)}, ` +
    `average ${usd(stats.average_price)}, from ${usd(stats.lowest_price)} to ${usd(stats.highest_price)}, ` +
    `sell-through ${(stats.sell_through_rate * 100).toFixed(2)}%; 12-month trend in price_trend.`
  );
}

/** The tools, in the order `tools/list` gives them. */
export const MCP_TOOLS: readonly McpTool[] = [
  defineTool({
    name: 'list_makes',
    title: 'List makes',
    description:
      'Normalized make names, sorted alphabetically: the exact values the `make` argument of the other tools takes. ' +
      'Free: not counted against the monthly allowance.',
    route: { controller: MakesController, handler: 'listMakes' },
    inputs: [],
    call: (clients) => listMakes(clients.query),
    summarize: (body: NameListResponse) => `${count(body.data.length)} makes.`,
  }),
  defineTool({
    name: 'list_models',
    title: 'List models of a make',
    description:
      'Normalized model names of one make, sorted alphabetically: the exact values of the `model` argument for that make. ' +
      'An unknown make is an error naming the valid way to find one. Free: not counted against the monthly allowance.',
    route: { controller: MakesController, handler: 'listModels' },
    inputs: [{ dto: ListModelsQueryDto, in: 'query' }],
    call: (clients, query) => listModels(clients.query, query),
    summarize: (body: NameListResponse, query) => `${count(body.data.length)} models of ${query.make}.`,
  }),
  defineTool({
    name: 'search_auctions',
    title: 'Search completed auctions',
    description:
      'Completed (not live) classic and collector car auctions from seven platforms, filtered by exact make, model, VIN ' +
      'or seller, inclusive year and price ranges, status, platform and a title/description keyword; sorted and paged ' +
      '(`page`/`limit`, or follow `meta.next_cursor` with `cursor`). `model` requires `make` unless `vin` or ' +
      '`seller_username` is given. Counts as one request against the monthly allowance.',
    route: { controller: AuctionsController, handler: 'search' },
    inputs: [{ dto: SearchAuctionsQueryDto, in: 'query' }],
    call: (clients, query) => searchAuctions(clients.query, query, clients.inFlight),
    summarize: (body: AuctionListResponseDto) => pageSummary(body, 'completed auctions'),
  }),
  defineTool({
    name: 'list_live_auctions',
    title: 'List live auctions',
    description:
      'Auctions running now on the two platforms followed live (bringatrailer, carsandbids): the filters of ' +
      'search_auctions plus `ending_after`, `ending_before` and `updated_since` (RFC 3339 date-times with an offset, or ' +
      'dates meaning 00:00 UTC); sorted by end time by default. Counts as one request against the monthly allowance.',
    route: { controller: AuctionsController, handler: 'live' },
    inputs: [{ dto: LiveAuctionsQueryDto, in: 'query' }],
    call: (clients, query) => listLiveAuctions(clients.query, query),
    summarize: (body: LiveAuctionListResponseDto) => pageSummary(body, 'live auctions'),
  }),
  defineTool({
    name: 'get_auction_bids',
    title: 'Bid history of an auction',
    description:
      'The bid history of one live or completed auction (`auction_id` = an `id` from search_auctions or ' +
      'list_live_auctions), optionally bounded by `bid_after`/`bid_before`; sorted by bid time by default. An unknown ' +
      'auction id is a Not Found error, and counts. Counts as one request against the monthly allowance.',
    route: { controller: AuctionsController, handler: 'bids' },
    inputs: [
      { dto: AuctionIdParamDto, in: 'path' },
      { dto: ListBidsQueryDto, in: 'query' },
    ],
    call: (clients, path, query) => listBids(clients.query, path, query),
    summarize: (body: BidListResponseDto, path) => pageSummary(body, `bids of auction ${path.auction_id}`),
  }),
  defineTool({
    name: 'get_price_stats',
    title: 'Pricing statistics',
    description:
      'Pricing statistics of one make (optionally one model and an inclusive model-year range) in US dollars: number ' +
      'of sales, average, exact median, lowest and highest sale price, sell-through rate, and a 12-month monthly trend. ' +
      'Requires a paid plan (1K, 10K or 100K). Counts as one request against the monthly allowance.',
    route: { controller: StatsController, handler: 'getStats' },
    inputs: [{ dto: StatsQueryDto, in: 'query' }],
    call: (clients, query) => getPriceStats(clients.stats, query),
    summarize: statsSummary,
  }),
];
