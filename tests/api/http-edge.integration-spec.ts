import { Agent, request as httpRequest } from 'node:http';
import { connect, Socket } from 'node:net';
import { openTestDataSource } from '@cars/testing';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import { AccessProbeModule } from './support/access-probe.module';
import { createTestAccount, TestAccount } from './support/accounts';
import { startTestGateway } from './support/stack';

/** The gateway's HTTP edge: requests a client library would not send, answered like any error. */
describe('HTTP edge cases', () => {
  let db: DataSource;
  let gateway: { url: string; gateway: NestFastifyApplication };
  let account: TestAccount;

  beforeAll(async () => {
    db = await openTestDataSource();
    gateway = await startTestGateway({ gatewayImports: [AccessProbeModule] });
    account = await createTestAccount(db, { plan: '10k' });
  });

  afterAll(async () => {
    await gateway?.gateway.close();
    await db?.destroy();
  });

  const send = (headers: Record<string, string | string[]>) =>
    new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
      const req = httpRequest(`${gateway.url}/probe-access/open`, { headers }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) as Record<string, unknown> }));
      });
      req.on('error', reject);
      req.end();
    });

  it('refuses two Authorization headers with 401, even when the first key is valid', async () => {
    expect((await send({ authorization: `Bearer ${account.apiKey}` })).status).toBe(200);
    for (const pair of [
      [`Bearer ${account.apiKey}`, 'Bearer cca_live_someoneelse000000000000000000000'],
      [`Bearer ${account.apiKey}`, `Bearer ${account.apiKey}`],
    ]) {
      const res = await send({ authorization: pair });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Unauthorized', message: expect.stringContaining('More than one Authorization header') });
    }
  });

  it('answers CONNECT with the error envelope instead of closing the connection', async () => {
    const { port } = new URL(gateway.url);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
      });
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    const [head, body] = raw.split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 404 Not Found');
    expect(head.toLowerCase()).toContain('content-type: application/json');
    expect(JSON.parse(body)).toEqual({ error: 'Not Found', message: 'No route CONNECT example.com:443' });
  });
});

/** What came back on a raw connection, and when the gateway closed it (ms after the first byte was sent). */
interface RawExchange {
  text: string;
  closedAfterMs: number;
}

/** Opens a connection, writes `chunks` (nothing: an idle connection), and waits for the gateway to close it. */
function rawExchange(baseUrl: string, chunks: string[], deadlineMs = 10_000): Promise<RawExchange> {
  const { port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(Number(port), '127.0.0.1');
    let text = '';
    let started = 0;
    const deadline = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the gateway kept the connection open ${deadlineMs} ms (received: ${text.slice(0, 200)})`));
    }, deadlineMs);
    socket.on('connect', () => {
      started = Date.now();
      for (const chunk of chunks) socket.write(chunk);
    });
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(deadline);
      resolve({ text, closedAfterMs: Date.now() - started });
    });
  });
}

function parseRaw(text: string): { status: number; headers: Record<string, string>; body: unknown } {
  const [head, ...rest] = text.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  const body = rest.join('\r\n\r\n');
  return { status: Number(statusLine.split(' ')[1]), headers, body: body ? JSON.parse(body) : undefined };
}

/**
 * What would hurt the gateway is refused at its edge: deep JSON, oversized headers, over-long
 * path parameters, connections that stall. Every refusal is in the error envelope and echoes
 * nothing of the input.
 */
describe('HTTP edge: refusals', () => {
  let gateway: { url: string; gateway: NestFastifyApplication };
  // Short timeouts, so that a stalled connection is closed within the test's patience.
  const timeouts = { headersMs: 400, requestMs: 800, keepAliveMs: 300, idleMs: 1_500 };
  /** Node checks the deadlines every quarter of the headers timeout; the answer then waits ≤ 1 s for the peer to close. */
  const slack = timeouts.headersMs / 4 + 1_000 + 300;

  beforeAll(async () => {
    gateway = await startTestGateway({ edge: { timeouts } });
  });

  afterAll(async () => {
    await gateway?.gateway.close();
  });

  it('refuses JSON nested 2,000 deep with a 400 in the envelope on every route that takes a body, before any validator', async () => {
    const doc = (await (await fetch(`${gateway.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops)
        .filter((method) => ['post', 'put', 'patch', 'delete'].includes(method))
        .map((method) => ({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, 'wh_0000000000000000000000') })),
    );
    // The account area, the webhooks and MCP are among them.
    for (const expected of ['POST /account/signin', 'POST /account/signup', 'POST /account/verify-email', 'POST /account/password', 'POST /mcp']) {
      expect(routes.map((r) => `${r.method} ${r.path}`)).toContain(expected);
    }
    expect(routes.some((r) => r.method === 'PATCH' && r.path.startsWith('/webhooks/'))).toBe(true);
    const deep = `{"a":${'['.repeat(2000)}${']'.repeat(2000)}}`;
    for (const route of routes) {
      const res = await fetch(`${gateway.url}${route.path}`, { method: route.method, headers: { 'content-type': 'application/json' }, body: deep });
      const body = await res.json();
      expect({ route, status: res.status, body }).toEqual({
        route,
        status: 400,
        body: {
          error: 'Validation Error',
          message: 'The body nests objects and arrays more than 32 levels deep',
          details: { body: ['The body nests objects and arrays more than 32 levels deep'] },
        },
      });
    }
    // 32 levels are a body like any other (here: the validator's 400 about the fields, not the depth).
    const res = await fetch(`${gateway.url}/account/signin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"email":${'['.repeat(31)}${']'.repeat(31)}}`,
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).not.toContain('levels deep');
  });

  it('answers bad JSON, a prototype-poisoning key and an over-long path parameter in the envelope without echoing them', async () => {
    const post = (body: string) => fetch(`${gateway.url}/account/signin`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const broken = await post('{"email":"secret-looking-input"');
    expect(broken.status).toBe(400);
    expect(await broken.json()).toEqual({ error: 'Validation Error', message: 'The body is not valid JSON', details: { body: ['The body is not valid JSON'] } });
    const poisoned = await post('{"__proto__":{"admin":true}}');
    expect(poisoned.status).toBe(400);
    expect(await poisoned.json()).toEqual({ error: 'Validation Error', message: 'The body is not valid JSON', details: { body: ['The body is not valid JSON'] } });

    const long = 'a'.repeat(5_000);
    const res = await fetch(`${gateway.url}/webhooks/${long}`);
    const text = await res.text();
    expect(res.status).toBe(414);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(JSON.parse(text)).toEqual({ error: 'URI Too Long', message: 'A path parameter is longer than 100 characters' });
    expect(text).not.toContain('aaaaaaaaaa');
    const badUrl = await fetch(`${gateway.url}/webhooks/%E0%A4%A`);
    const badText = await badUrl.text();
    expect(badUrl.status).toBe(400);
    expect(JSON.parse(badText)).toEqual({
      error: 'Validation Error',
      message: 'The path is not a valid URL (a bad percent-encoding)',
      details: { path: ['The path is not a valid URL (a bad percent-encoding)'] },
    });
    expect(badText).not.toContain('%E0');
  });

  it('answers headers over 16 KB with 431 and Connection: close; the next request, on a new connection, works', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = (headers: Record<string, string>) =>
      new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
        const req = httpRequest(`${gateway.url}/health/live`, { agent, headers }, (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      expect((await get({})).status).toBe(200);
      const refused = await get({ 'x-filler': 'x'.repeat(20_000) });
      expect(refused.status).toBe(431);
      expect(refused.headers.connection).toBe('close');
      expect(JSON.parse(refused.body)).toEqual({ error: 'Request Header Fields Too Large', message: 'The request headers are larger than 16 KB' });
      for (let i = 0; i < 5; i += 1) expect((await get({})).status).toBe(200);
    } finally {
      agent.destroy();
    }
  });

  it('closes a connection that sends nothing within the headers timeout', async () => {
    const idle = await rawExchange(gateway.url, []);
    expect(idle.closedAfterMs).toBeGreaterThanOrEqual(timeouts.headersMs - 50);
    expect(idle.closedAfterMs).toBeLessThan(timeouts.headersMs + slack);
  });

  it('answers a request whose body stops half way with 408 and Connection: close within the request timeout', async () => {
    const half = await rawExchange(gateway.url, [
      'POST /account/signin HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n',
      '{"email":"half',
    ]);
    expect(half.closedAfterMs).toBeGreaterThanOrEqual(timeouts.requestMs - 50);
    expect(half.closedAfterMs).toBeLessThan(timeouts.requestMs + slack);
    const answer = parseRaw(half.text);
    expect(answer.status).toBe(408);
    expect(answer.headers.connection).toBe('close');
    expect(answer.body).toEqual({ error: 'Request Timeout', message: 'The request did not arrive in time' });
  });

  it('closes a keep-alive connection idle after its answer within the keep-alive timeout', async () => {
    const kept = await rawExchange(gateway.url, ['GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n']);
    expect(parseRaw(kept.text).status).toBe(200);
    expect(kept.closedAfterMs).toBeLessThan(timeouts.keepAliveMs + slack);
  });
});
