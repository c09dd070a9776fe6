import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { insertAuctions, insertBids, openTestDataSource, useIsolatedQueryEnvironment } from '@cars/testing';
import { DataSource } from 'typeorm';
import { createTestAccount, settledUsage, TestAccount } from './support/accounts';
import { bearer, JsonResponse, request } from './support/http';
import { parsePrometheus, sampleValue } from './support/prometheus';
import { startTestGateway, startTestStack, TestStack } from './support/stack';

/**
 * The MCP endpoint through the SDK's own client over Streamable HTTP, against a gateway whose
 * query and stats services answer over RabbitMQ: every tool's input schema against the OpenAPI
 * parameters of its REST route, every tool's result and errors against the REST answers for the
 * same parameters, and metering (counted, free and invalid calls, the plan limit, the paid plan,
 * the burst limit). A database and a vhost of this spec's own.
 */

jest.setTimeout(60_000);

/** The REST route each tool mirrors (an OpenAPI path and method). */
const TOOL_ROUTES: Record<string, { method: string; path: string }> = {
  list_makes: { method: 'get', path: '/makes' },
  list_models: { method: 'get', path: '/models' },
  search_auctions: { method: 'get', path: '/auctions' },
  list_live_auctions: { method: 'get', path: '/auctions/live' },
  get_auction_bids: { method: 'get', path: '/auctions/{auction_id}/bids' },
  get_price_stats: { method: 'get', path: '/stats' },
};

interface OpenApiParameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema: Record<string, unknown>;
}

type Args = Record<string, unknown>;

/** The REST URL of a tool call: path parameters into the path, the rest as the query string. */
function restUrl(tool: string, args: Args): string {
  let path = TOOL_ROUTES[tool].path;
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(args)) {
    if (path.includes(`{${name}}`)) path = path.replace(`{${name}}`, encodeURIComponent(String(value)));
    else query.append(name, String(value));
  }
  return query.size > 0 ? `${path}?${query}` : path;
}

describe('MCP endpoint (/mcp)', () => {
  let env: { restore(): Promise<void> };
  let stack: TestStack;
  let db: DataSource;
  let paid: TestAccount;
  let liveId: number;
  const clients: Client[] = [];

  async function connect(apiKey: string, url = stack.url): Promise<Client> {
    const client = new Client({ name: 'mcp-integration-spec', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  const call = async (client: Client, name: string, args: Args = {}): Promise<CallToolResult> =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  const rest = (path: string, account: TestAccount): Promise<JsonResponse> => request(`${stack.url}${path}`, bearer(account.apiKey));
  const used = async (account: TestAccount): Promise<number> => {
    const usage = await settledUsage(db, account.accountId);
    expect(usage.reserved).toBe(0);
    return usage.used;
  };
  const texts = (result: CallToolResult): string[] => result.content.map((c) => (c.type === 'text' ? c.text : `<${c.type}>`));

  /** A raw JSON-RPC POST, as any MCP client sends it (the headers the SDK client cannot show). */
  const post = (url: string, apiKey: string | null, message: unknown): Promise<Response> =>
    fetch(`${url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
      },
      body: JSON.stringify(message),
    });

  beforeAll(async () => {
    env = await useIsolatedQueryEnvironment('mcp');
    db = await openTestDataSource();
    await db.query(`INSERT INTO makes (name) VALUES ('Porsche'), ('BMW'), ('Ferrari')`);
    await db.query(
      `INSERT INTO models (make_id, name) SELECT id, m FROM makes, unnest(ARRAY['911', '356']) m WHERE name = 'Porsche'`,
    );
    await db.query(`INSERT INTO models (make_id, name) SELECT id, 'M3' FROM makes WHERE name = 'BMW'`);
    const ids = await insertAuctions(db, [
      { title: '1967 Porsche 911S', year: 1967, price: 145000, bid_count: 20, auction_end_date: '2025-06-01' },
      { title: '1973 Porsche 911 Carrera RS', year: 1973, price: 210000, bid_count: 45, auction_end_date: '2025-07-15', source: 'carsandbids' },
      { title: '1989 Porsche 911 Speedster', year: 1989, price: 98000, bid_count: 31, auction_end_date: '2025-08-01', auction_status: 'reserve not met', source_status: 'reserve not met' },
      { title: '1960 Porsche 356B', ocd_model_name: '356', year: 1960, price: 95000, bid_count: 12, auction_end_date: '2024-11-02' },
      { title: '1988 BMW M3', ocd_make_name: 'BMW', ocd_model_name: 'M3', year: 1988, price: 80000, currency: 'EUR', auction_end_date: '2024-02-20' },
      { title: '1970 Porsche 911T', year: 1970, price: 80000, bid_count: 3, is_live: true, auction_end_at: '2030-01-01T18:00:00Z', auction_end_date: '2030-01-01' },
      { title: '1990 BMW M3 Evo', ocd_make_name: 'BMW', ocd_model_name: 'M3', year: 1990, price: 120000, bid_count: 30, is_live: true, source: 'carsandbids', auction_end_at: '2030-01-02T18:00:00Z', auction_end_date: '2030-01-02' },
    ]);
    liveId = ids[5];
    await insertBids(db, liveId, [
      { bidder_name: 'b1', amount: 50000, bid_at: '2025-12-28T10:00:00Z' },
      { bidder_name: 'b2', amount: 80000, bid_at: '2025-12-29T10:00:00Z' },
      { bidder_name: 'b3', amount: 60000, bid_at: '2025-12-30T10:00:00Z' },
    ]);
    stack = await startTestStack({ access: { burstCapacity: 10000, burstRatePerSecond: 10000 } });
    paid = await createTestAccount(db, { plan: '100k' });
  }, 60_000);

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await stack?.close();
    await db?.destroy();
    // Dropping the database and the vhost took over a minute twice while other suites loaded the machine.
    await env?.restore();
  }, 120_000);

  it('lists the six tools; each input schema states exactly the OpenAPI parameters of its REST route', async () => {
    const client = await connect(paid.apiKey);
    expect(client.getServerVersion()).toMatchObject({ name: 'classic-car-auctions' });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(Object.keys(TOOL_ROUTES));

    const doc = (await request(`${stack.url}/openapi.json`)).body as {
      paths: Record<string, Record<string, { parameters?: OpenApiParameter[] }>>;
    };
    for (const tool of tools as Tool[]) {
      const route = TOOL_ROUTES[tool.name];
      expect(tool.description).toContain(`Mirrors ${route.method.toUpperCase()} ${route.path}`);
      expect(tool.annotations).toMatchObject({ readOnlyHint: true });
      const parameters = (doc.paths[route.path][route.method].parameters ?? []).filter((p) => p.in === 'query' || p.in === 'path');
      const expected = Object.fromEntries(
        parameters.map((p) => {
          const { example, ...schema } = p.schema;
          return [
            p.name,
            { ...schema, ...(p.description !== undefined ? { description: p.description } : {}), ...(example !== undefined ? { examples: [example] } : {}) },
          ];
        }),
      );
      const { inputSchema } = tool;
      expect({ tool: tool.name, properties: inputSchema.properties ?? {} }).toEqual({ tool: tool.name, properties: expected });
      expect({ tool: tool.name, required: [...(inputSchema.required ?? [])].sort() }).toEqual({
        tool: tool.name,
        required: parameters.filter((p) => p.required).map((p) => p.name).sort(),
      });
      expect(inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
    }

    // The limits and enums an agent sees, spelled out for the record.
    const search = tools.find((t) => t.name === 'search_auctions')!.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(search.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 50 });
    expect(search.sort).toMatchObject({ type: 'string', enum: ['date', 'price', 'year', 'bids'], default: 'date' });
    expect(search.status.enum).toEqual(['sold', 'bid to', 'reserve not met', 'canceled', 'unknown', 'withdrawn']);
    const live = tools.find((t) => t.name === 'list_live_auctions')!.inputSchema.properties as Record<string, Record<string, unknown>>;
    expect(live.source.enum).toEqual(['bringatrailer', 'carsandbids']);
    expect(live.ending_before).toMatchObject({ type: 'string', format: 'date-time' });
    const bids = tools.find((t) => t.name === 'get_auction_bids')!.inputSchema;
    expect(bids.required).toEqual(['auction_id']);
    expect((bids.properties as Record<string, unknown>).limit).toMatchObject({ maximum: 100, default: 100 });
    expect(tools.find((t) => t.name === 'get_price_stats')!.inputSchema.required).toEqual(['make']);
  });

  it('answers every tool with the JSON of the REST response for the same parameters, and a summary', async () => {
    const client = await connect(paid.apiKey);
    const cases: [string, Args, RegExp][] = [
      ['list_makes', {}, /^3 makes\.$/],
      ['list_models', { make: 'Porsche' }, /^2 models of Porsche\.$/],
      ['search_auctions', { make: 'Porsche', sort: 'price', direction: 'desc', limit: 2 }, /^2 completed auctions \(page 1 of 2, 4 in all\)\. More: /],
      ['search_auctions', { keyword: 'carrera', year_min: 1970, status: 'sold' }, /^1 completed auctions \(page 1 of 1, 1 in all\)\.$/],
      ['list_live_auctions', { sort: 'bids', direction: 'desc' }, /^2 live auctions \(page 1 of 1, 2 in all\)\.$/],
      ['get_auction_bids', { auction_id: liveId, sort: 'amount', direction: 'desc' }, new RegExp(`^3 bids of auction ${liveId} \\(page 1 of 1, 3 in all\\)\\.$`)],
      ['get_price_stats', { make: 'Porsche', model: '911', year_min: 1960, year_max: 1999 }, /^Pricing statistics of Porsche 911, model years 1960–1999: /],
    ];
    for (const [tool, args, summary] of cases) {
      const rest = await restOf(tool, args);
      expect({ tool, status: rest.status }).toEqual({ tool, status: 200 });
      const result = await call(client, tool, args);
      expect({ tool, isError: result.isError ?? false }).toEqual({ tool, isError: false });
      expect({ tool, body: result.structuredContent }).toEqual({ tool, body: rest.body });
      const [text, json] = texts(result);
      expect({ tool, summary: text }).toEqual({ tool, summary: expect.stringMatching(summary) });
      expect(JSON.parse(json)).toEqual(rest.body);
    }

    // Cursor paging gives the REST pages too.
    const first = await call(client, 'search_auctions', { make: 'Porsche', limit: 2, pagination: 'cursor' });
    const cursor = (first.structuredContent as { meta: { next_cursor: string } }).meta.next_cursor;
    const second = await call(client, 'search_auctions', { make: 'Porsche', limit: 2, cursor });
    expect(second.structuredContent).toEqual((await restOf('search_auctions', { make: 'Porsche', limit: 2, cursor })).body);
  });

  /** The REST answer to a tool's parameters, with the paid key. */
  const restOf = (tool: string, args: Args): Promise<JsonResponse> => rest(restUrl(tool, args), paid);

  it('answers bad arguments with tool errors carrying the REST error body (same details), free of charge', async () => {
    const account = await createTestAccount(db, { plan: '1k' });
    const client = await connect(account.apiKey);
    const cases: [string, Args, number][] = [
      ['search_auctions', { limit: 1000 }, 400],
      ['search_auctions', { model: '911' }, 400],
      ['search_auctions', { colour: 'red', year_min: 2000, year_max: 1990 }, 400],
      ['search_auctions', { page: 2, pagination: 'cursor' }, 400],
      ['list_live_auctions', { source: 'hemmings' }, 400],
      ['list_live_auctions', { ending_after: '2026-01-01T00:00:00' }, 400],
      ['get_auction_bids', { auction_id: 0, limit: 1000 }, 400],
      ['get_auction_bids', { auction_id: 'abc' }, 400],
      ['get_auction_bids', { auction_id: liveId, bid_after: 'yesterday' }, 400],
      ['get_price_stats', {}, 400],
      ['get_price_stats', { make: 'Moskvitch' }, 400],
      ['get_price_stats', { make: 'Porsche', model: 'Testarossa' }, 400],
      ['list_models', {}, 400],
      ['list_models', { make: 'Trabant' }, 400],
      ['list_makes', { colour: 'red' }, 400],
    ];
    for (const [tool, args, status] of cases) {
      const result = await call(client, tool, args);
      const restAnswer = await rest(restUrl(tool, args), account);
      expect({ tool, args, status: restAnswer.status }).toEqual({ tool, args, status });
      expect({ tool, args, isError: result.isError }).toEqual({ tool, args, isError: true });
      expect({ tool, args, body: result.structuredContent }).toEqual({ tool, args, body: restAnswer.body });
      expect(JSON.parse(texts(result)[1])).toEqual(restAnswer.body);
      expect(texts(result)[0]).toContain('Validation Error: ');
    }
    // The REST 400s did not count either.
    expect(await used(account)).toBe(0);
  });

  it('counts each counted tool call once, a Not Found too; initialize, tools/list, list_makes, list_models and invalid calls are free', async () => {
    const account = await createTestAccount(db, { plan: '1k' });
    const client = await connect(account.apiKey);
    await client.listTools();
    await call(client, 'list_makes');
    await call(client, 'list_models', { make: 'BMW' });
    expect(await used(account)).toBe(0);

    expect((await call(client, 'search_auctions', { limit: 1 })).isError).toBeFalsy();
    expect(await used(account)).toBe(1);
    expect((await call(client, 'list_live_auctions', { limit: 1 })).isError).toBeFalsy();
    expect(await used(account)).toBe(2);
    expect((await call(client, 'get_auction_bids', { auction_id: liveId })).isError).toBeFalsy();
    expect(await used(account)).toBe(3);
    expect((await call(client, 'get_price_stats', { make: 'BMW' })).isError).toBeFalsy();
    expect(await used(account)).toBe(4);

    const missing = await call(client, 'get_auction_bids', { auction_id: 2147480000 });
    expect(missing.isError).toBe(true);
    expect(missing.structuredContent).toEqual((await rest('/auctions/2147480000/bids', paid)).body);
    expect(missing.structuredContent).toMatchObject({ error: 'Not Found' });
    expect(await used(account)).toBe(5);

    await call(client, 'search_auctions', { limit: 0 });
    await call(client, 'get_price_stats', { make: 'Moskvitch' });
    expect(await used(account)).toBe(5);

    // The response carries the allowance headers, as a counted REST response does.
    const res = await post(stack.url, account.apiKey, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_auctions', arguments: { limit: 1 } } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('994');
    expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000);
    const body = (await res.json()) as { result: CallToolResult };
    expect(body.result.isError).toBeFalsy();
    expect(await used(account)).toBe(6);
  });

  it('refuses a JSON-RPC batch with a JSON-RPC error, running none of its calls; a request the transport refuses counts nothing', async () => {
    const account = await createTestAccount(db, { plan: '1k' });
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search_auctions', arguments: { limit: 1 } } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_live_auctions', arguments: { limit: 1 } } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_makes', arguments: {} } },
    ];
    const calls = sampleValue(parsePrometheus(await (await fetch(`${stack.url}/metrics`)).text()), 'mcp_tool_calls_total', { tool: 'list_makes', outcome: 'ok' }) ?? 0;
    const res = await post(stack.url, account.apiKey, batch);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: expect.stringContaining('batches are not supported') },
    });
    expect(await used(account)).toBe(0);
    expect(sampleValue(parsePrometheus(await (await fetch(`${stack.url}/metrics`)).text()), 'mcp_tool_calls_total', { tool: 'list_makes', outcome: 'ok' }) ?? 0).toBe(calls);
    // One message at a time is answered.
    expect((await post(stack.url, account.apiKey, batch[0])).status).toBe(200);
    expect(await used(account)).toBe(1);

    const notAcceptable = await fetch(`${stack.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${account.apiKey}` },
      body: JSON.stringify(batch[0]),
    });
    expect(notAcceptable.status).toBe(406);
    expect(await notAcceptable.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    expect(await used(account)).toBe(1);
  });

  it('refuses a keyword no index can serve, as the REST route does', async () => {
    const client = await connect(paid.apiKey);
    const short = await call(client, 'search_auctions', { keyword: 'M3' });
    const restShort = await rest('/auctions?keyword=M3', paid);
    expect(restShort.status).toBe(400);
    expect(short.isError).toBe(true);
    expect(short.structuredContent).toEqual(restShort.body);
    expect(short.structuredContent).toMatchObject({ details: { keyword: [expect.stringContaining('at least one word part of 3 or more characters')] } });
    expect((await call(client, 'search_auctions', { keyword: 'M3 Evo' })).isError).toBeFalsy();
  });

  it('answers the plan-limit error at the limit, like the REST 429, and keeps the free tools', async () => {
    const account = await createTestAccount(db, { plan: '1k', used: 999 });
    const client = await connect(account.apiKey);
    expect((await call(client, 'search_auctions', { limit: 1 })).isError).toBeFalsy();
    expect(await used(account)).toBe(1000);

    const limited = await call(client, 'search_auctions', { limit: 1 });
    const restLimited = await rest('/auctions?limit=1', account);
    expect(restLimited.status).toBe(429);
    expect(limited.isError).toBe(true);
    expect(limited.structuredContent).toEqual(restLimited.body);
    expect(limited.structuredContent).toEqual({
      error: 'Rate Limit Exceeded',
      message: expect.stringMatching(/^Monthly request limit of 1,000 for the 1K plan exceeded/),
    });
    expect((await call(client, 'get_price_stats', { make: 'BMW' })).structuredContent).toEqual(restLimited.body);
    expect((await call(client, 'list_makes')).isError).toBeFalsy();
    expect(await settledUsage(db, account.accountId)).toEqual({ used: 1000, reserved: 0 });
  });

  it('refuses get_price_stats on the Free plan with the REST 403 message, uncounted; the other tools work', async () => {
    const free = await createTestAccount(db, { plan: 'free' });
    const client = await connect(free.apiKey);
    const refused = await call(client, 'get_price_stats', { make: 'Porsche' });
    const restRefused = await rest('/stats?make=Porsche', free);
    expect(restRefused.status).toBe(403);
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toEqual(restRefused.body);
    expect(refused.structuredContent).toEqual({
      error: 'Forbidden',
      message: 'Pricing statistics requires an active paid plan (1K, 10K or 100K); this account is on the Free plan',
    });
    expect(await used(free)).toBe(0);
    expect((await call(client, 'search_auctions', { limit: 1 })).isError).toBeFalsy();
    expect(await used(free)).toBe(1);
  });

  it('answers 401 without a key or with a bad one, with the REST error body', async () => {
    const restMissing = await request(`${stack.url}/auctions`);
    const missing = await post(stack.url, null, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect(await missing.json()).toEqual(restMissing.body);

    const bad = `cca_live_${'0'.repeat(32)}`;
    const invalid = await post(stack.url, bad, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(invalid.status).toBe(401);
    expect(await invalid.json()).toEqual((await request(`${stack.url}/auctions`, bearer(bad))).body);

    const client = new Client({ name: 'mcp-integration-spec', version: '1.0.0' });
    await expect(client.connect(new StreamableHTTPClientTransport(new URL(`${stack.url}/mcp`)))).rejects.toMatchObject({ code: 401 });
  });

  it('answers GET and DELETE /mcp with 405 (stateless: no stream, no session)', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${stack.url}/mcp`, { method, headers: { authorization: `Bearer ${paid.apiKey}`, accept: 'text/event-stream' } });
      expect({ method, status: res.status }).toEqual({ method, status: 405 });
      expect(res.headers.get('allow')).toBe('POST');
      expect(await res.json()).toMatchObject({ error: 'Method Not Allowed' });
    }
  });

  it('applies the burst limit to every /mcp request: 429 with Retry-After, like REST', async () => {
    let gateway: NestFastifyApplication | undefined;
    try {
      const started = await startTestGateway({ access: { burstCapacity: 2, burstRatePerSecond: 0.5 } });
      gateway = started.gateway;
      const account = await createTestAccount(db, { plan: '1k' });
      const statuses: number[] = [];
      let limited: Response | undefined;
      for (let i = 0; i < 3; i++) {
        const res = await post(started.url, account.apiKey, { jsonrpc: '2.0', id: i, method: 'tools/list' });
        statuses.push(res.status);
        if (res.status === 429) limited = res;
        else await res.arrayBuffer();
      }
      expect(statuses).toEqual([200, 200, 429]);
      expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await limited!.json()).toEqual({
        error: 'Rate Limit Exceeded',
        message: expect.stringMatching(/^Burst limit exceeded: the 1K plan allows/),
      });
      expect(await used(account)).toBe(0);
    } finally {
      await gateway?.close();
    }
  });

  it('shows /mcp in the HTTP metrics, and tool calls by tool and outcome', async () => {
    const client = await connect(paid.apiKey);
    await call(client, 'search_auctions', { limit: 1 });
    await call(client, 'search_auctions', { limit: 1000 });
    const samples = parsePrometheus(await (await fetch(`${stack.url}/metrics`)).text());
    expect(sampleValue(samples, 'http_requests_total', { method: 'POST', route: '/mcp', status: '200' })).toBeGreaterThan(0);
    expect(sampleValue(samples, 'mcp_tool_calls_total', { tool: 'search_auctions', outcome: 'ok' })).toBeGreaterThan(0);
    expect(sampleValue(samples, 'mcp_tool_calls_total', { tool: 'search_auctions', outcome: 'invalid' })).toBeGreaterThan(0);
  });

  it('documents POST /mcp in the OpenAPI document', async () => {
    const doc = (await request(`${stack.url}/openapi.json`)).body as { paths: Record<string, Record<string, { tags?: string[] }>> };
    expect(Object.keys(doc.paths['/mcp'])).toEqual(['post']);
    expect(doc.paths['/mcp'].post.tags).toEqual(['MCP']);
  });
});
