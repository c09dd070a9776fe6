import { applyDecorators, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Req } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import { ListModelsQueryDto, StatsQueryDto, StatsResponse } from '@cars/contracts';
import { QUERY_CLIENT, ServiceClient, STATS_CLIENT } from '@cars/messaging';
import { SOURCES } from '@cars/persistence';
import type { FastifyRequest } from 'fastify';
import { ApiServiceDown, ApiValidationError, ErrorResponseDto, RATE_LIMIT_HEADERS } from '../auctions/api-responses';
import { listMakes, listModels } from '../makes/makes.controller';
import { getPriceStats, StatsRoute } from '../stats/stats.controller';
import { AccountAreaService } from './account-area.service';
import { AccountRoute, ApiBurstLimited, ApiChangeForbidden, sessionOf } from './account-session.guard';
import {
  AccountNameListResponseDto,
  AccountOverviewResponseDto,
  ApiKeyCreatedResponseDto,
  ApiKeyListResponseDto,
  SourceListResponseDto,
} from './dto/account.dto';

const RETRY_AFTER = { 'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer' } } };

const ApiSessionErrors = (service?: string) => applyDecorators(ApiBurstLimited(), ...(service ? [ApiServiceDown(service)] : []));

/**
 * What the console shows besides sign-in and webhooks: the overview (plan, billing period, usage),
 * API keys, the reference lists of its filter pickers, and `/account/stats` — the same route as
 * `/stats` (paid plan, counted against the allowance), for the session's account.
 */
@ApiTags('Account area')
@Controller('account')
export class AccountDataController {
  constructor(
    private readonly area: AccountAreaService,
    @Inject(QUERY_CLIENT) private readonly query: ServiceClient,
    @Inject(STATS_CLIENT) private readonly stats: ServiceClient,
  ) {}

  @Get('overview')
  @AccountRoute()
  @ApiOperation({
    summary: 'Account overview',
    description:
      'The account, the plan in force (Free once a paid plan lapsed), the billing period (calendar month, UTC) and this ' +
      'period\'s usage: `used` of `allowance`, split into API `requests` and webhook `deliveries`, when it resets, and ' +
      'the same split per UTC day of the period so far (`usage.daily`).',
  })
  @ApiOkResponse({ type: AccountOverviewResponseDto })
  @ApiSessionErrors()
  overview(@Req() request: FastifyRequest): Promise<AccountOverviewResponseDto> {
    return this.area.overview(sessionOf(request).accountId);
  }

  @Get('keys')
  @AccountRoute()
  @ApiOperation({ summary: 'API keys', description: 'The account\'s keys by prefix, newest first, revoked ones included. Never the keys themselves.' })
  @ApiOkResponse({ type: ApiKeyListResponseDto })
  @ApiSessionErrors()
  async listKeys(@Req() request: FastifyRequest): Promise<ApiKeyListResponseDto> {
    return { data: await this.area.listKeys(sessionOf(request).accountId) };
  }

  @Post('keys')
  @HttpCode(201)
  @AccountRoute()
  @ApiOperation({ summary: 'Create an API key', description: 'The key is in this response only (`api_key`); only its hash is stored. At most 20 active keys.' })
  @ApiCreatedResponse({ type: ApiKeyCreatedResponseDto })
  @ApiConflictResponse({ type: ErrorResponseDto, description: '`Conflict`: 20 active keys already.' })
  @ApiChangeForbidden()
  @ApiSessionErrors()
  createKey(@Req() request: FastifyRequest): Promise<ApiKeyCreatedResponseDto> {
    return this.area.createKey(sessionOf(request).accountId);
  }

  @Delete('keys/:id')
  @HttpCode(204)
  @AccountRoute()
  @ApiOperation({ summary: 'Revoke an API key', description: 'The key stops working at once on every gateway. Revoking a revoked key is a no-op.' })
  @ApiParam({ name: 'id', description: 'Key id (UUID) from GET /account/keys.' })
  @ApiNoContentResponse({ description: 'Revoked.' })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: '`Not Found`: no key with this id on the account.' })
  @ApiChangeForbidden()
  @ApiSessionErrors()
  async revokeKey(@Req() request: FastifyRequest, @Param('id') id: string): Promise<void> {
    await this.area.revokeKey(sessionOf(request).accountId, id);
  }

  @Get('makes')
  @AccountRoute()
  @ApiOperation({ summary: 'Make names (as /makes)', description: 'The exact values of the `make` filter, sorted. Not counted.' })
  @ApiOkResponse({ type: AccountNameListResponseDto })
  @ApiSessionErrors('query')
  makes(): Promise<AccountNameListResponseDto> {
    return listMakes(this.query);
  }

  @Get('models')
  @AccountRoute()
  @ApiOperation({ summary: 'Model names of a make (as /models)', description: 'The exact values of the `model` filter for the make, sorted. Not counted.' })
  @ApiOkResponse({ type: AccountNameListResponseDto })
  @ApiValidationError()
  @ApiSessionErrors('query')
  models(@Query() query: ListModelsQueryDto): Promise<AccountNameListResponseDto> {
    return listModels(this.query, query);
  }

  @Get('sources')
  @AccountRoute()
  @ApiOperation({ summary: 'Source platforms', description: 'The seven platforms: the values of the `source` filter, and which are followed live.' })
  @ApiOkResponse({ type: SourceListResponseDto })
  @ApiSessionErrors()
  sources(): SourceListResponseDto {
    return { data: SOURCES.map((s) => ({ id: s.id, name: s.name, live: s.live })) };
  }

  @Get('stats')
  @AccountRoute()
  @StatsRoute()
  @ApiTooManyRequestsResponse({
    type: ErrorResponseDto,
    description: '`Rate Limit Exceeded`: the monthly allowance (X-RateLimit-* headers) or the account\'s burst limit (`Retry-After`).',
    headers: { ...RATE_LIMIT_HEADERS, ...RETRY_AFTER },
  })
  @ApiServiceDown('stats')
  getStats(@Query() query: StatsQueryDto): Promise<StatsResponse> {
    return getPriceStats(this.stats, query);
  }
}
