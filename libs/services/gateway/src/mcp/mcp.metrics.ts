import { counter } from '@cars/metrics';

/** `tools/call` requests of the MCP endpoint, by tool name and outcome. */
export const mcpToolCalls = counter({
  name: 'mcp_tool_calls_total',
  help: 'MCP tools/call requests answered by the gateway, by tool and outcome (ok, not_found, invalid, forbidden, rate_limited, unavailable, error).',
  labelNames: ['tool', 'outcome'] as const,
});

export type McpToolOutcome = 'ok' | 'not_found' | 'invalid' | 'forbidden' | 'rate_limited' | 'unavailable' | 'error';

/** The outcome label of a call answered with (the equivalent of) this REST status. */
export function outcomeOf(status: number): McpToolOutcome {
  if (status < 400) return 'ok';
  switch (status) {
    case 400:
      return 'invalid';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 429:
      return 'rate_limited';
    case 503:
      return 'unavailable';
    default:
      return 'error';
  }
}
