import { Controller, Get, Header, Inject, Param, Query, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  isSeveralWordKeyword,
  AuctionIdParamDto,
  AuctionListResponseDto,
  BidListResponseDto,
  JsonText,
  ListBidsQueryDto,
  LiveAuctionListResponseDto,
  LiveAuctionsQueryDto,
  QueryPatterns,
  SearchAuctionsQueryDto,
} from '@cars/contracts';
import { QUERY_CLIENT, ServiceClient } from '@cars/messaging';
import { answerOf } from './service-answer';
import type { FastifyRequest } from 'fastify';
import { InFlightCapped, InFlightSlot } from '../metering/in-flight';
import { Metered } from '../metering/metered.decorator';
import { ApiAuctionNotFound, ApiMeteredOk, ApiQueryErrors } from './api-responses';

const PAGING =
  'Paging: `page` (from 1) and `limit` (1–100), or `pagination=cursor` and then `cursor=<meta.next_cursor>` for ' +
  'keyset paging (same items; `meta.has_more` and `meta.next_cursor` are added; `meta.total` stays exact). ' +
  'Sorting is deterministic: ties are broken by `id`, and null values sort last in both directions. ' +
  'Unknown parameters are a 400 naming them.';

const SEARCH = [
  'Completed auctions (not live). All filters are optional and combine with AND; without any, the most recent ' +
    'auctions come first.',
  '',
  '- `make`, `model`, `vin`, `seller_username`: exact matches (`vin` is case-sensitive; `make`/`model` match ' +
    '`ocd_make_name`/`ocd_model_name`). `model` requires `make` unless `vin` or `seller_username` is given.',
  '- `year_min`/`year_max`, `price_min`/`price_max`: inclusive; a lower bound above its upper bound is a 400.',
  '- `keyword`: case-insensitive substring of the title or the description.',
  '- `sort`: `date` (auction end date, default), `price`, `year`, `bids`; `direction` default `desc`.',
  '',
  PAGING,
].join('\n');

const LIVE = [
  'Auctions running now on the two platforms followed live (`bringatrailer`, `carsandbids`; another `source` is ' +
    'a 400). Same filters as /auctions, plus `ending_after`, `ending_before` and `updated_since` (RFC 3339 ' +
    'date-times with an offset, or dates meaning 00:00 UTC).',
  '',
  '- `sort`: `ending` (default), `created`, `updated`, `price` (current bid), `year`, `bids`; `direction` default `asc`.',
  '- Poll with `updated_since` set to the largest `updated_at` seen.',
  '',
  PAGING,
].join('\n');

/** The query service answers with the body's JSON text: sent unchanged, not parsed and re-serialized. */
const JSON_BODY = ['Content-Type', 'application/json; charset=utf-8'] as const;

const BIDS =
  'Bid history of one live or completed auction. `bid_after`/`bid_before` bound `bid_at` (inclusive). `sort`: ' +
  '`bid_at` (default), `amount`, `created`; `direction` default `asc`; ties by `id`, nulls last. `limit` default 100. ' +
  'An unknown auction id is a 404 (and counts); an id that is not an integer ≥ 1 is a 400.';

// The routes' calls to the query service, shared with the MCP tools (src/mcp): one query path.

/**
 * GET /auctions: the body's JSON text, or the service's error thrown as an ApiException. A keyword
 * of several words runs in the account's lane for them (`slot`: the request's place in flight).
 */
export async function searchAuctions(
  query: ServiceClient,
  params: SearchAuctionsQueryDto,
  slot?: InFlightSlot,
): Promise<JsonText<AuctionListResponseDto>> {
  const send = async () => answerOf(await query.send(QueryPatterns.SearchAuctions, { ...params }));
  return slot && isSeveralWordKeyword(params.keyword) ? slot.broadSearch(send) : send();
}

/** GET /auctions/live. */
export async function listLiveAuctions(
  query: ServiceClient,
  params: LiveAuctionsQueryDto,
): Promise<JsonText<LiveAuctionListResponseDto>> {
  return answerOf(await query.send(QueryPatterns.ListLiveAuctions, { ...params }));
}

/** GET /auctions/{auction_id}/bids (404 for an unknown auction). */
export async function listBids(
  query: ServiceClient,
  path: AuctionIdParamDto,
  params: ListBidsQueryDto,
): Promise<JsonText<BidListResponseDto>> {
  return answerOf(await query.send(QueryPatterns.ListBids, { ...params, auction_id: path.auction_id }));
}

@ApiTags('Auctions')
@ApiBearerAuth()
@InFlightCapped()
@Controller('auctions')
export class AuctionsController {
  constructor(@Inject(QUERY_CLIENT) private readonly query: ServiceClient) {}

  @Get()
  @Header(...JSON_BODY)
  @Metered()
  @ApiOperation({ summary: 'Search completed auctions', description: SEARCH })
  @ApiMeteredOk(AuctionListResponseDto)
  @ApiQueryErrors()
  search(@Query() query: SearchAuctionsQueryDto, @Req() request: FastifyRequest): Promise<JsonText<AuctionListResponseDto>> {
    return searchAuctions(this.query, query, request.inFlightSlot);
  }

  @Get('live')
  @Header(...JSON_BODY)
  @Metered()
  @ApiOperation({ summary: 'List live auctions', description: LIVE })
  @ApiMeteredOk(LiveAuctionListResponseDto)
  @ApiQueryErrors()
  live(@Query() query: LiveAuctionsQueryDto): Promise<JsonText<LiveAuctionListResponseDto>> {
    return listLiveAuctions(this.query, query);
  }

  @Get(':auction_id/bids')
  @Header(...JSON_BODY)
  @Metered()
  @ApiOperation({ summary: 'Bid history of one auction', description: BIDS })
  @ApiMeteredOk(BidListResponseDto)
  @ApiQueryErrors()
  @ApiAuctionNotFound()
  bids(@Param() params: AuctionIdParamDto, @Query() query: ListBidsQueryDto): Promise<JsonText<BidListResponseDto>> {
    return listBids(this.query, params, query);
  }
}
