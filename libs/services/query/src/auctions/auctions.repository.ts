import { Injectable } from '@nestjs/common';
import { CostlyTurns } from '@cars/persistence';
import { isSeveralWordKeyword } from '@cars/contracts';
import { SqlClient } from '../sql/sql-client';
import {
  AuctionFilters,
  AuctionScope,
  COUNT_SETTINGS,
  countQuery,
  DATA_VERSION_QUERY,
  KEYWORD_COUNT_SETTINGS,
  KEYWORD_STRATEGY_SETTINGS,
  keywordIndexable,
  KeywordStrategy,
  PageRequest,
  pageQuery,
  SORT_COLUMNS,
  SqlQuery,
} from './auction-query';

/** One item of a page: its JSON text, id and sort value (text, for the next cursor). */
export interface AuctionRow {
  item: string;
  id: string;
  sort_key: string | null;
  /** With `with: 'data_version'`. */
  data_version?: string;
  /** With `with: 'total'`. */
  total?: number;
}

export interface DataState {
  /** Data version of `auctions` (see migration QueryIndexes). */
  version: string;
  /** The planner's estimate of the number of rows of `auctions`. */
  rows: number;
}

export type PageFetch = Omit<PageRequest, 'nullsOnly'>;

@Injectable()
export class AuctionsRepository {
  constructor(
    private readonly sql: SqlClient,
    private readonly turns: CostlyTurns,
  ) {}

  /**
   * A keyword of several words on completed auctions: its token lookups only narrow the candidates,
   * each of which is then tested (ILIKE) — up to every description. Its statements take turns.
   */
  private costly(scope: AuctionScope, filters: AuctionFilters): boolean {
    return scope === 'completed' && isSeveralWordKeyword(filters.keyword);
  }

  async dataState(): Promise<DataState> {
    const [row] = await this.sql.query<DataState>(DATA_VERSION_QUERY.text, DATA_VERSION_QUERY.values);
    return row ?? { version: '0', rows: 1 };
  }

  async count(scope: AuctionScope, filters: AuctionFilters): Promise<number> {
    const { text, values } = countQuery(scope, filters);
    // Live rows keep their small trigram indexes; completed ones use title trigrams and description tokens.
    const keyword = filters.keyword;
    const indexed = keyword !== undefined && (scope === 'live' ? [...keyword].length >= 3 : keywordIndexable(keyword));
    const count = () => this.sql.queryWith<{ total: number }>(indexed ? KEYWORD_COUNT_SETTINGS : COUNT_SETTINGS, text, values);
    const [row] = this.costly(scope, filters) ? await this.turns.run(count) : await count();
    return row?.total ?? 0;
  }

  private run(query: SqlQuery, strategy?: KeywordStrategy): Promise<AuctionRow[]> {
    return strategy
      ? this.sql.queryWith<AuctionRow>(KEYWORD_STRATEGY_SETTINGS[strategy], query.text, query.values)
      : this.sql.query<AuctionRow>(query.text, query.values);
  }

  private fetch(request: PageFetch, query: SqlQuery, strategy?: KeywordStrategy): Promise<AuctionRow[]> {
    return this.costly(request.scope, request.filters) ? this.turns.run(() => this.run(query, strategy)) : this.run(query, strategy);
  }

  /**
   * Up to `limit` rows: after skipping `offset`, or strictly after the keyset position `after`.
   * Nulls sort last: when a keyset page runs out of non-null values it continues into the rows
   * whose sort value is null, in id order. `strategy` is for keyword filters of /auctions.
   */
  async page(request: PageFetch, strategy?: KeywordStrategy): Promise<AuctionRow[]> {
    const rows = await this.fetch(request, pageQuery({ ...request, keywordStrategy: strategy }), strategy);
    const intoNulls =
      rows.length < request.limit &&
      request.after !== undefined &&
      request.after.key !== null &&
      SORT_COLUMNS[request.order.sort].nullable;
    if (!intoNulls) return rows;
    const tail = pageQuery({
      ...request,
      after: undefined,
      offset: undefined,
      with: undefined,
      nullsOnly: true,
      limit: request.limit - rows.length,
      keywordStrategy: strategy,
    });
    return rows.concat(await this.fetch(request, tail, strategy));
  }
}
