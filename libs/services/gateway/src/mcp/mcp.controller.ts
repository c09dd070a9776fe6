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
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { ErrorNames, errorMessage } from '@cars/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiValidationError, ErrorResponseDto } from '../auctions/api-responses';
import { ApiException } from '../http/api-exception';
import { InFlightCapped } from '../metering/in-flight';
import { UsageMeter } from '../metering/usage-meter';
import { McpRequestUsage } from './mcp-usage';
import { McpService } from './mcp.service';
import '../http/request-context';

const DESCRIPTION = [
  'The Model Context Protocol over Streamable HTTP (stateless: no session, JSON responses) for AI agents, with the ' +
    'same API key. Tools: `list_makes`, `list_models`, `search_auctions`, `list_live_auctions`, `get_auction_bids`, ' +
    '`get_price_stats` — the REST routes\' parameters, limits and result JSON. See docs/api/mcp.md.',
  '',
  '- The body is one JSON-RPC 2.0 message; send `Accept: application/json, text/event-stream`. A batch (a JSON ' +
    'array, which the current MCP revision no longer allows) is refused: HTTP 400 with JSON-RPC error -32600.',
  '- Every request takes a token of the burst limit (429 with `Retry-After`). A `tools/call` of a tool whose REST ' +
    'route counts counts once, and its plan and allowance errors are tool errors (`isError`) carrying the REST error ' +
    'body; `initialize`, `tools/list`, `list_makes` and `list_models` are free.',
  '- `GET /mcp` (no server-sent event stream) and `DELETE /mcp` (no session) answer 405.',
].join('\n');

/**
 * A JSON-RPC batch is refused as a whole: the MCP revision 2025-06-18 removed batching, and one
 * HTTP request carrying a hundred tool calls would pass the burst limit and the in-flight cap as one.
 */
const BATCH_REFUSED = {
  jsonrpc: '2.0',
  id: null,
  error: {
    code: ErrorCode.InvalidRequest,
    message: 'Invalid Request: batches are not supported (the current MCP revision removed JSON-RPC batching); send one message per POST /mcp',
  },
} as const;

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
  @InFlightCapped()
  @ApiOperation({ summary: 'Model Context Protocol endpoint (tools over the query API)', description: DESCRIPTION })
  @ApiBody({
    description: 'One JSON-RPC 2.0 request or notification of the Model Context Protocol (batches are refused).',
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
    if (Array.isArray(request.body)) {
      await reply.status(400).type('application/json; charset=utf-8').send(BATCH_REFUSED);
      return;
    }
    const response = reply.raw;
    const server = this.mcp.createServer({
      principal: request.principal,
      usage: new McpRequestUsage(this.meter, response),
      inFlight: request.inFlightSlot,
    });
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
