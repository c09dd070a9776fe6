import { Injectable } from '@nestjs/common';
import {
  AUCTIONS_DEFAULT_LIMIT,
  AuctionDto,
  AuctionFilterQueryDto,
  AuctionListResponseDto,
  JsonText,
  LiveAuctionDto,
  LiveAuctionListResponseDto,
  LiveAuctionsQueryDto,
  Paginated,
  RpcReply,
  SearchAuctionsQueryDto,
  rpcError,
  rpcOk,
  validationError,
} from '@cars/contracts';
import { pageJson } from './auction.projection';
import { AuctionFilters, AuctionOrder, AuctionScope, filtersKey, keywordStrategy } from './auction-query';
import { AuctionRow, AuctionsRepository, PageFetch } from './auctions.repository';
import { CountCache } from './count-cache';
import { decodeCursor, encodeCursor, INVALID_CURSOR } from './cursor';

/** Beyond this offset the total is known first, so a page past the end costs no index walk. */
const DEEP_OFFSET = 10_000;

/** `2026-01-31` (a date) means 00:00 UTC that day; date-times keep their explicit offset. */
function instant(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  return /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value;
}

function present<T>(value: T | null | undefined): T | undefined {
  return value ?? undefined;
}

function commonFilters(query: AuctionFilterQueryDto): AuctionFilters {
  return {
    make: present(query.make),
    model: present(query.model),
    vin: present(query.vin),
    seller_username: present(query.seller_username),
    year_min: present(query.year_min),
    year_max: present(query.year_max),
    price_min: present(query.price_min),
    price_max: present(query.price_max),
    keyword: present(query.keyword),
  };
}

export function completedFilters(query: SearchAuctionsQueryDto): AuctionFilters {
  return { ...commonFilters(query), status: present(query.status), source: present(query.source) };
}

export function liveFilters(query: LiveAuctionsQueryDto): AuctionFilters {
  return {
    ...commonFilters(query),
    source: present(query.source),
    ending_after: instant(present(query.ending_after)),
    ending_before: instant(present(query.ending_before)),
    updated_since: instant(present(query.updated_since)),
  };
}

interface ListPlan {
  scope: AuctionScope;
  filters: AuctionFilters;
  order: AuctionOrder;
  limit: number;
  page?: number;
  cursorMode: boolean;
  cursor?: string;
}

interface Counted {
  total: number;
  rows: number;
}

/**
 * GET /auctions and GET /auctions/live: filters, order, offset or keyset paging, and an exact
 * `meta.total` from a separate count statement. Totals of completed auctions are cached per filter
 * set and data version (exact: see CountCache); live totals cover ~1,500 rows and are counted
 * every time.
 */
@Injectable()
export class AuctionsService {
  readonly counts = new CountCache();

  constructor(private readonly repository: AuctionsRepository) {}

  async search(query: SearchAuctionsQueryDto): Promise<RpcReply<JsonText<AuctionListResponseDto>>> {
    return this.list<AuctionDto>(
      {
        scope: 'completed',
        filters: completedFilters(query),
        order: { sort: query.sort ?? 'date', direction: query.direction ?? 'desc' },
        limit: query.limit ?? AUCTIONS_DEFAULT_LIMIT,
        page: present(query.page),
        cursorMode: query.pagination === 'cursor' || query.cursor != null,
        cursor: present(query.cursor),
      },
    );
  }

  async live(query: LiveAuctionsQueryDto): Promise<RpcReply<JsonText<LiveAuctionListResponseDto>>> {
    return this.list<LiveAuctionDto>(
      {
        scope: 'live',
        filters: liveFilters(query),
        order: { sort: query.sort ?? 'ending', direction: query.direction ?? 'asc' },
        limit: query.limit ?? AUCTIONS_DEFAULT_LIMIT,
        page: present(query.page),
        cursorMode: query.pagination === 'cursor' || query.cursor != null,
        cursor: present(query.cursor),
      },
    );
  }

  private async list<T extends AuctionDto | LiveAuctionDto>(plan: ListPlan): Promise<RpcReply<JsonText<Paginated<T>>>> {
    const { scope, filters, order, limit } = plan;
    const key = filtersKey(scope, filters);
    const cursorKey = `${key}\n${order.sort}\n${order.direction}`;
    const position = plan.cursor === undefined ? undefined : decodeCursor(plan.cursor, cursorKey);
    if (position === null) return rpcError(400, validationError({ cursor: [INVALID_CURSOR] }));
    // Cursor mode reads one row more than it returns: whether another page follows.
    const fetchLimit = plan.cursorMode ? limit + 1 : limit;
    const offset = plan.cursorMode ? 0 : ((plan.page ?? 1) - 1) * limit;
    const request: PageFetch = { scope, filters, order, limit: fetchLimit, offset, after: position };
    const keyword = scope === 'completed' ? filters.keyword : undefined;

    let rows: AuctionRow[];
    let total: number;
    if (scope === 'live') {
      // ~1,500 rows: page and exact count in one statement.
      rows = await this.repository.page({ ...request, with: 'total' });
      total = rows[0]?.total ?? (await this.repository.count(scope, filters));
    } else if (keyword !== undefined || offset > DEEP_OFFSET) {
      // The total first: a keyword page gets a strategy chosen from it (the planner cannot
      // estimate ILIKE), and a page past the end costs no index walk.
      const counted = await this.completedTotal(filters, key);
      total = counted.total;
      const strategy =
        keyword === undefined ? undefined : keywordStrategy(total, counted.rows, offset + fetchLimit, keyword);
      rows = offset >= total ? [] : await this.repository.page(request, strategy);
    } else {
      // The page brings the data version along: one round trip when the total is cached.
      rows = await this.repository.page({ ...request, with: 'data_version' });
      const version = rows[0]?.data_version;
      total =
        version === undefined
          ? (await this.completedTotal(filters, key)).total
          : await this.counts.getOrCount(key, version, () => this.repository.count(scope, filters));
    }

    // Both modes carry the next page's cursor: a client may start in page mode and follow it.
    const before = plan.cursorMode ? (position?.offset ?? 0) : offset;
    const items = rows.slice(0, limit);
    const hasMore = plan.cursorMode ? rows.length > limit : before + items.length < total;
    const last = items[items.length - 1];
    const nextCursor =
      hasMore && last ? encodeCursor({ key: last.sort_key, id: last.id, offset: before + items.length }, cursorKey) : null;
    const meta = {
      total,
      page: plan.cursorMode ? Math.floor(before / limit) + 1 : (plan.page ?? 1),
      limit,
      total_pages: Math.ceil(total / limit),
      has_more: hasMore,
      next_cursor: nextCursor,
    };
    return rpcOk(pageJson<T>(items.map((row) => row.item), meta));
  }

  /**
   * The exact total of completed auctions for a filter set: cached per data version. The version
   * is read before the count starts (see CountCache.getOrCount). Also the planner's table size.
   */
  private async completedTotal(filters: AuctionFilters, key: string): Promise<Counted> {
    const state = await this.repository.dataState();
    const total = await this.counts.getOrCount(key, state.version, () => this.repository.count('completed', filters));
    return { total, rows: state.rows };
  }
}
