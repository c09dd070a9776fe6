import { Inject, Injectable, Logger } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
// The low-level Server (which the SDK keeps for "advanced use cases"), not McpServer: McpServer
// takes zod shapes and validates arguments with zod itself, while these tools state the REST
// parameters' JSON Schema (from the DTOs) and validate with the REST routes' own rules, so a bad
// argument gets the REST `details` message.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { ErrorBody, ErrorNames, errorMessage, validationError } from '@cars/contracts';
import { QUERY_CLIENT, ServiceClient, ServiceUnavailableError, STATS_CLIENT } from '@cars/messaging';
import type { ApiPrincipal } from '../http/request-context';
import { accountRequirementError } from '../metering/admission.errors';
import { ApiException } from '../http/api-exception';
import { API_ACCESS_CONFIG, ApiAccessConfig } from '../metering/api-access.config';
import { METERED } from '../metering/metered.decorator';
import { PAID_PLAN, PaidPlanRequirement } from '../metering/paid-plan.decorator';
import { MeterTicket } from '../metering/usage-meter';
import { API_TITLE, API_VERSION } from '../openapi';
import { InFlightSlot } from '../metering/in-flight';
import { McpRequestUsage } from './mcp-usage';
import { mcpToolCalls, outcomeOf } from './mcp.metrics';
import { McpClients, McpTool, MCP_TOOLS, RestRoute } from './mcp.tools';
import { parseToolInput } from './tool-input';

/** Who calls, and the allowance their request draws on (no principal: METERING_ENABLED=false). */
export interface McpCaller {
  principal?: ApiPrincipal;
  usage: McpRequestUsage;
  /** The HTTP request's place among its account's requests in flight. */
  inFlight?: InFlightSlot;
}

/** A tool's access rules, read from the decorators of the REST route it mirrors. */
export interface ToolRules {
  metered: boolean;
  paidPlan?: PaidPlanRequirement;
}

const INSTRUCTIONS =
  'Classic and collector car auction data from seven platforms (2018 to now): completed auctions, live auctions, ' +
  'bid histories and USD pricing statistics. Make and model arguments are exact names: look them up with list_makes ' +
  'and list_models first. Every result is the JSON of the REST API (see structuredContent). search_auctions, ' +
  'list_live_auctions, get_auction_bids and get_price_stats each count as one request against the monthly allowance ' +
  'of the API key; get_price_stats needs a paid plan.';

type Outcome = { status: number; result: CallToolResult };

/**
 * The MCP tools over the REST routes' own calls: rules from the routes' decorators, arguments
 * validated with the routes' DTOs, answers from the same services over RabbitMQ, errors as the
 * REST error bodies. One Server per HTTP request (stateless Streamable HTTP).
 */
@Injectable()
export class McpService {
  private readonly logger = new Logger('MCP');
  private readonly tools = new Map<string, { tool: McpTool; rules: ToolRules }>();
  private readonly clients: McpClients;
  private readonly listing: Tool[];

  constructor(
    @Inject(QUERY_CLIENT) query: ServiceClient,
    @Inject(STATS_CLIENT) stats: ServiceClient,
    private readonly reflector: Reflector,
    @Inject(API_ACCESS_CONFIG) private readonly config: ApiAccessConfig,
  ) {
    this.clients = { query, stats };
    for (const tool of MCP_TOOLS) this.tools.set(tool.name, { tool, rules: this.rulesOf(tool.route) });
    this.listing = MCP_TOOLS.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema,
      annotations: { title: tool.title, readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    }));
  }

  /** The rules of the tool mirroring this route: `@Metered()` and `@RequiresPaidPlan()`, as the guard reads them. */
  rulesOf(route: RestRoute): ToolRules {
    const handler = (route.controller.prototype as Record<string, unknown>)[route.handler] as (...args: unknown[]) => unknown;
    const targets = [handler, route.controller];
    return {
      metered: this.reflector.getAllAndOverride<boolean | undefined>(METERED, targets) === true,
      paidPlan: this.reflector.getAllAndOverride<PaidPlanRequirement | undefined>(PAID_PLAN, targets),
    };
  }

  /** A Server answering one HTTP request's messages for this caller. */
  createServer(caller: McpCaller): Server {
      const server = new Server(
      { name: 'classic-car-auctions', title: API_TITLE, version: API_VERSION },
      { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: this.listing }));
    server.setRequestHandler(CallToolRequestSchema, (request) =>
      this.callTool(request.params.name, request.params.arguments, caller),
    );
    return server;
  }

  async callTool(name: string, args: Record<string, unknown> | undefined, caller: McpCaller): Promise<CallToolResult> {
    const entry = this.tools.get(name);
    if (!entry) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const { status, result } = await this.answer(entry.tool, entry.rules, args, caller);
    mcpToolCalls.inc({ tool: name, outcome: outcomeOf(status) });
    return result;
  }

  /**
   * The REST order of answers, per call: 403 (paid plan) → 400 (arguments) → 429 (allowance) →
   * the service's answer. Unlike REST, arguments are checked before a unit is reserved, so invalid
   * input never holds one. (Authentication and the burst limit were the guard's, per HTTP request.)
   */
  private async answer(tool: McpTool, rules: ToolRules, args: Record<string, unknown> | undefined, caller: McpCaller): Promise<Outcome> {
    const { principal } = caller;
    const now = this.config.now();
    const refusal = principal && rules.paidPlan ? accountRequirementError(principal, rules.paidPlan, now) : null;
    if (refusal) return this.failure(refusal);
    const input = parseToolInput(tool.inputs, args);
    if (!input.ok) return failed(400, validationError(input.details));
    let ticket: MeterTicket | undefined;
    if (principal && rules.metered) {
      try {
        ticket = await caller.usage.reserve(principal, now);
      } catch (error) {
        return this.failure(error);
      }
    }
    let outcome: Outcome = failed(500, { error: ErrorNames.Internal, message: 'An unexpected error occurred' });
    try {
      const answer = await tool.answer({ ...this.clients, inFlight: caller.inFlight }, input.values);
      outcome = {
        status: 200,
        result: {
          content: [
            { type: 'text', text: answer.summary },
            { type: 'text', text: answer.json },
          ],
          structuredContent: answer.body,
        },
      };
    } catch (error) {
      outcome = this.failure(error);
    } finally {
      if (ticket) caller.usage.settle(ticket, outcome.status);
    }
    return outcome;
  }

  /** An error as the REST route would answer it (the error filter's bodies), as a tool error. */
  private failure(error: unknown): Outcome {
    if (error instanceof ApiException) return failed(error.getStatus(), error.body);
    if (error instanceof ServiceUnavailableError) {
      this.logger.warn(`tool call → 503: ${error.message}: ${errorMessage(error.cause)}`);
      return failed(503, { error: ErrorNames.ServiceUnavailable, message: `${error.message}; try again shortly` });
    }
    this.logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    return failed(500, { error: ErrorNames.Internal, message: 'An unexpected error occurred' });
  }
}

/** A tool error: the REST error body as structured content and JSON text, after a one-line summary. */
export function failed(status: number, body: ErrorBody): Outcome {
  const details = Object.entries(body.details ?? {}).map(([name, messages]) => ` ${name}: ${messages.join('; ')}.`);
  return {
    status,
    result: {
      isError: true,
      content: [
        { type: 'text', text: `${body.error}: ${body.message}${details.length > 0 ? ' —' : ''}${details.join('')}` },
        { type: 'text', text: JSON.stringify(body) },
      ],
      structuredContent: { ...body },
    },
  };
}
