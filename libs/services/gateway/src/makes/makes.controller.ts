import { Controller, Get, Inject, Query, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiNotModifiedResponse, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { ListModelsQueryDto, NameListResponse, QueryPatterns } from '@cars/contracts';
import { QUERY_CLIENT, ServiceClient } from '@cars/messaging';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiServiceDown, ApiValidationError } from '../auctions/api-responses';
import { ApiNoCredentials, Public } from '../auth/auth.decorators';
import { answerOf } from '../auctions/service-answer';
import { sendCacheable } from './http-cache';

/** OpenAPI schema of `{data: [string]}`. */
class NameListResponseDto implements NameListResponse {
  @ApiProperty({ type: 'string', isArray: true, example: ['Alfa Romeo', 'Mercedes-Benz', 'Porsche'] })
  data: string[];
}

const CACHING =
  'Public and not counted. Responses carry `ETag` and `Cache-Control`; send the tag back in `If-None-Match` ' +
  'to get 304 Not Modified without a body when the list has not changed.';

const CACHE_HEADERS = {
  ETag: { description: 'A tag of the list: send it back in `If-None-Match`.', schema: { type: 'string' } },
  'Cache-Control': { description: 'How long the list may be reused without asking.', schema: { type: 'string' } },
} as const;

const IF_NONE_MATCH = ApiHeader({
  name: 'If-None-Match',
  required: false,
  description: 'An `ETag` from an earlier response: 304 when it still matches.',
});

/** GET /makes over the query service; shared with the MCP tool `list_makes`. */
export async function listMakes(query: ServiceClient): Promise<NameListResponse> {
  return answerOf(await query.send(QueryPatterns.ListMakes, {}));
}

/** GET /models (400 for an unknown make); shared with the MCP tool `list_models`. */
export async function listModels(query: ServiceClient, params: ListModelsQueryDto): Promise<NameListResponse> {
  return answerOf(await query.send(QueryPatterns.ListModels, { make: params.make }));
}

@ApiTags('Reference')
@Public()
@ApiNoCredentials()
@Controller()
export class MakesController {
  constructor(@Inject(QUERY_CLIENT) private readonly query: ServiceClient) {}

  @Get('makes')
  @ApiOperation({
    summary: 'Normalized make names, the exact values of the `make` parameter',
    description: `Sorted alphabetically. ${CACHING}`,
  })
  @IF_NONE_MATCH
  @ApiOkResponse({ type: NameListResponseDto, description: '`{data: [string]}` sorted alphabetically', headers: CACHE_HEADERS })
  @ApiNotModifiedResponse({ description: 'The `If-None-Match` tag matches: no body.', headers: CACHE_HEADERS })
  @ApiValidationError()
  @ApiServiceDown('query')
  async listMakes(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await sendCacheable(request, reply, await listMakes(this.query));
  }

  @Get('models')
  @ApiOperation({
    summary: 'Normalized model names of one make',
    description: `Sorted alphabetically; the exact values of the \`model\` parameter for that make. ${CACHING}`,
  })
  @IF_NONE_MATCH
  @ApiOkResponse({ type: NameListResponseDto, description: '`{data: [string]}` sorted alphabetically', headers: CACHE_HEADERS })
  @ApiNotModifiedResponse({ description: 'The `If-None-Match` tag matches: no body.', headers: CACHE_HEADERS })
  @ApiValidationError()
  @ApiServiceDown('query')
  async listModels(
    @Query() query: ListModelsQueryDto,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await sendCacheable(request, reply, await listModels(this.query, query));
  }
}
