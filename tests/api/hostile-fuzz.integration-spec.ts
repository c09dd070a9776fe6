import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { setPlan } from '@cars/accounts';
import { caseResolver, PUBLIC_DESTINATIONS } from '@cars/net-guard/testing';
import { insertAuction, insertBids, openTestDataSource } from '@cars/testing';
import { DataSource } from 'typeorm';
import { Pool } from 'undici';
import { accountAreaModule, CapturingLogger, ConsoleClient, OpenApiConformance } from './support/account-area';
import { createTestAccount } from './support/accounts';
import { ECHO_MARKER, HostileRequest, HostileRequests, operationsOf } from './support/hostile-requests';
import { startTestStack, TestStack } from './support/stack';
import { pgPoolOf } from '@cars/persistence';

/** FUZZ_REQUESTS and FUZZ_SEED lengthen a run or try other requests; the same seed sends the same requests. */
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 20_000);
const SEED = process.env.FUZZ_SEED ?? 'hostile-1';
const CONCURRENCY = 8;

jest.setTimeout(600_000);

const HOOK = 'https://hooks.example.com/fuzz';
const resolver = caseResolver([...PUBLIC_DESTINATIONS, { url: HOOK, resolvesTo: ['93.184.215.14'], why: 'the specs’ receiver' }]);

interface Failure {
  request: HostileRequest;
  problem: string;
}

const ENVELOPE_KEYS = new Set(['error', 'message', 'details']);

/** What is wrong with an answer (null: nothing). Every 4xx is the error envelope (MCP's own errors: JSON-RPC). */
export function problemWith(request: HostileRequest, status: number, headers: Record<string, string | string[] | undefined>, text: string): string | null {
  if (status >= 500) return `${status}: ${text.slice(0, 200)}`;
  if (text.includes(ECHO_MARKER.repeat(50))) return `${status} echoes the input: ${text.slice(0, 300)}`;
  if (status < 400 || request.method === 'HEAD') return null;
  const type = String(headers['content-type'] ?? '');
  if (!type.startsWith('application/json')) return `${status} with content-type ${type || '(none)'}`;
  if (text.length > 4096) return `${status} with a ${text.length}-byte error body`;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `${status} with a body that is not JSON: ${text.slice(0, 100)}`;
  }
  const b = body as Record<string, unknown>;
  if (/^\/mcp\/?$/.test(request.url.split('?')[0]) && b?.jsonrpc === '2.0') {
    const error = b.error as { code?: unknown; message?: unknown } | undefined;
    return typeof error?.code === 'number' && typeof error.message === 'string' ? null : `${status} JSON-RPC answer without an error`;
  }
  if (typeof b !== 'object' || b === null || Array.isArray(b)) return `${status} body is not an object`;
  const extra = Object.keys(b).filter((k) => !ENVELOPE_KEYS.has(k));
  if (typeof b.error !== 'string' || typeof b.message !== 'string' || extra.length > 0) {
    return `${status} outside the envelope: ${text.slice(0, 200)}`;
  }
  if (b.details !== undefined) {
    const details = b.details as Record<string, unknown>;
    if (typeof details !== 'object' || details === null || Array.isArray(details)) return `${status} details is not an object`;
    for (const messages of Object.values(details)) {
      if (!Array.isArray(messages) || messages.some((m) => typeof m !== 'string')) return `${status} details hold something else than message lists`;
    }
  }
  return null;
}

/**
 * Hostile requests over every route of the gateway (each operation of /openapi.json and the
 * routes it leaves out), a seeded stream of them with credentials good enough to reach the
 * services: no answer is a 5xx, every 4xx is the error envelope without echoing the input, no
 * connection breaks under a request it did not carry, and nothing is logged as an error.
 */
describe('hostile requests over every route', () => {
  let stack: TestStack;
  let db: DataSource;
  const logger = new CapturingLogger();

  beforeAll(async () => {
    db = await openTestDataSource();
    await db.query(`INSERT INTO makes (name) VALUES ('Porsche') ON CONFLICT DO NOTHING`);
    // The query, stats and webhooks services (the stack's own), destinations resolved by the spec.
    stack = await startTestStack({
      webhooks: { resolver },
      access: { burstCapacity: 1_000_000, burstRatePerSecond: 1_000_000 },
      gatewayImports: [accountAreaModule()],
      logger,
    });
  });

  afterAll(async () => {
    await stack?.close();
    await db?.destroy();
  });

  it(`answers ${REQUESTS} of them without a 5xx, each 4xx in the error envelope`, async () => {
    const conformance = await OpenApiConformance.load(stack.url);
    const doc = (await (await fetch(`${stack.url}/openapi.json`)).json()) as Parameters<typeof operationsOf>[0];
    const operations = operationsOf(doc);
    expect(operations.length).toBeGreaterThan(20);

    // A paid, verified account reached by its API key, and a console session of another one.
    const bearer = await createTestAccount(db, { plan: '100k' });
    const browser = new ConsoleClient(stack.url, conformance);
    const signUp = await browser.signUp(`fuzz-${randomUUID()}@example.test`);
    expect(signUp.status).toBe(201);
    await setPlan(pgPoolOf(db), { accountId: signUp.body.account.id, plan: '100k' });
    await db.query(`UPDATE accounts SET email_verified = true WHERE id = $1`, [signUp.body.account.id]);
    const session = await browser.get('/account/session');
    const hook = await fetch(`${stack.url}/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bearer.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: HOOK, event_types: ['auction.created'] }),
    });
    expect(hook.status).toBe(201);
    const webhookId = ((await hook.json()) as { id: string }).id;
    const auctionId = await insertAuction(db, {});
    await insertBids(db, auctionId, [{}, {}, {}]);

    const requests = new HostileRequests(SEED, operations, {
      apiKey: bearer.apiKey,
      sessionCookie: browser.cookie!,
      csrfToken: session.body.csrf_token,
      ids: { id: [webhookId, String(auctionId)], auction_id: [String(auctionId)], deliveryId: [randomUUID()], keyId: [randomUUID()] },
    });

    const pool = new Pool(stack.url, { connections: CONCURRENCY, headersTimeout: 30_000, bodyTimeout: 30_000 });
    const failures: Failure[] = [];
    const statuses = new Map<number, number>();
    let sent = 0;
    const worker = async () => {
      while (sent < REQUESTS) {
        sent += 1;
        const request = requests.next();
        try {
          const res = await pool.request({ method: request.method as 'GET', path: request.url, headers: request.headers, body: request.body });
          const text = await res.body.text();
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          const problem = problemWith(request, res.statusCode, res.headers, text);
          if (problem) failures.push({ request, problem });
        } catch (error) {
          failures.push({ request, problem: `no answer: ${(error as Error).message}` });
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    } finally {
      await pool.close();
    }

    // One line per kind of problem (numbers and quoted input folded), with a count and an example.
    const kinds = new Map<string, { count: number; example: string }>();
    for (const { request, problem } of failures) {
      const key = `${request.route}: ${problem.replace(/'[^']*'/g, "'…'").replace(/\d+/g, 'N').slice(0, 160)}`;
      const entry = kinds.get(key) ?? { count: 0, example: `${request.kind} | ${request.method} ${request.url.slice(0, 120)} | ${request.body?.slice(0, 80) ?? ''}` };
      entry.count += 1;
      kinds.set(key, entry);
    }
    // FUZZ_LOG=file keeps the gateway's log of the run (what each 503 or 4xx said).
    if (process.env.FUZZ_LOG) writeFileSync(process.env.FUZZ_LOG, logger.lines.join('\n'));
    expect({ failures: failures.length, kinds: [...kinds].map(([key, { count, example }]) => `${count} × ${key} — e.g. ${example}`) }).toEqual({ failures: 0, kinds: [] });
    // The stream reached past authentication and validation, not just the edge.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(REQUESTS / 50);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(REQUESTS / 10);
    expect(logger.lines.filter((line) => line.startsWith('error'))).toEqual([]);
  });
});
