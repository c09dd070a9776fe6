import { Controller, Delete, Get, Logger, Post, Req, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiBody,
  ApiExcludeEndpoint,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorNames, errorMessage } from '@cars/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiValidationError, ErrorResponseDto } from '../auctions/api-responses';
import { ApiException } from '../http/api-exception';
import { UsageMeter } from '../metering/usage-meter';
import { McpRequestUsage } from './mcp-usage';
import { McpService } from './mcp.service';
import '../http/request-context';

const DESCRIPTION = [
  'The Model Context Protocol over Streamable HTTP (stateless: no session, JSON responses) for AI agents, with the ' +
    'same API key. Tools: `list_makes`, `list_models`, `search_auctions`, `list_live_auctions`, `get_auction_bids`, ' +
    '`get_price_stats` — the REST routes\' parameters, limits and result JSON. See docs/api/mcp.md.',
  '',
  '- The body is a JSON-RPC 2.0 message (or batch); send `Accept: application/json, text/event-stream`.',
  '- Every request takes a token of the burst limit (429 with `Retry-After`). A `tools/call` of a tool whose REST ' +
    'route counts counts once, and its plan and allowance errors are tool errors (`isError`) carrying the REST error ' +
    'body; `initialize`, `tools/list`, `list_makes` and `list_models` are free.',
  '- `GET /mcp` (no server-sent event stream) and `DELETE /mcp` (no session) answer 405.',
].join('\n');

const NO_STREAM =
  'This MCP endpoint is stateless: it opens no server-sent event stream (GET) and has no session to end (DELETE); ' +
  'send JSON-RPC messages with POST /mcp';

/** `POST /mcp`: a Server and a transport of its own per request, so any gateway replica can answer any request. */
@ApiTags('MCP')
@ApiBearerAuth()
@Controller('mcp')
export class McpController {
  private readonly logger = new Logger('MCP');

  constructor(
    private readonly mcp: McpService,
    private readonly meter: UsageMeter,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Model Context Protocol endpoint (tools over the query API)', description: DESCRIPTION })
  @ApiBody({
    description: 'A JSON-RPC 2.0 request or notification of the Model Context Protocol, or a batch of them.',
    schema: { type: 'object', additionalProperties: true, example: { jsonrpc: '2.0', id: 1, method: 'tools/list' } },
  })
  @ApiOkResponse({
    description: 'The JSON-RPC response(s); tool results carry the REST body as `structuredContent`.',
    schema: { type: 'object', additionalProperties: true },
  })
  @ApiAcceptedResponse({ description: 'Notifications only: nothing to answer.' })
  @ApiValidationError()
  @ApiUnauthorizedResponse({ type: ErrorResponseDto, description: '`Unauthorized`: missing or invalid API key.' })
  @ApiTooManyRequestsResponse({ type: ErrorResponseDto, description: '`Rate Limit Exceeded`: the burst limit (`Retry-After`).' })
  async post(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const response = reply.raw;
    const server = this.mcp.createServer({ principal: request.principal, usage: new McpRequestUsage(this.meter, response) });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // Closing the server closes its transport.
    response.once('close', () => {
      server.close().catch((error: unknown) => this.logger.warn(`closing an MCP server: ${errorMessage(error)}`));
    });
    // The transport writes the response itself; Fastify's onResponse hooks (metrics) still run.
    reply.hijack();
    try {
      await server.connect(transport);
      await transport.handleRequest(request.raw, response, request.body);
    } catch (error) {
      this.logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
      if (!response.headersSent) {
        response.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
        response.end(JSON.stringify({ error: ErrorNames.Internal, message: 'An unexpected error occurred' }));
      }
    }
  }

  @Get()
  @ApiExcludeEndpoint()
  noStream(): never {
    throw new ApiException(405, { error: 'Method Not Allowed', message: NO_STREAM }, { allow: 'POST' });
  }

  @Delete()
  @ApiExcludeEndpoint()
  noSession(): never {
    throw new ApiException(405, { error: 'Method Not Allowed', message: NO_STREAM }, { allow: 'POST' });
  }
}
