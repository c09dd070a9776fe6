import { randomUUID } from 'node:crypto';
import { Rng } from '@cars/datagen';

/** One operation of the gateway: from /openapi.json, or a route the document leaves out. */
export interface Operation {
  method: string;
  /** The path template, e.g. `/webhooks/{id}/deliveries`. */
  path: string;
  query: string[];
  /** Property names of the JSON body, when the operation takes one. */
  body: string[] | null;
}

/** A request a hostile or broken client sends. */
export interface HostileRequest {
  method: string;
  /** Path and query, already encoded as sent. */
  url: string;
  /** Flat [name, value, name, value…]: a name may repeat. */
  headers: string[];
  body?: string;
  /** The operation it was made from (for the report). */
  route: string;
  /** What was hostile about it, for the report. */
  kind: string;
}

/** What the requests may use to get past authentication, so the fuzz reaches deep. */
export interface FuzzCredentials {
  apiKey: string;
  sessionCookie: string;
  csrfToken: string;
  /** Ids that exist, per path parameter name (e.g. `id` → a webhook of the account). */
  ids: Record<string, string[]>;
}

type OpenApi = {
  paths: Record<string, Record<string, { parameters?: { name: string; in: string }[]; requestBody?: { content?: Record<string, { schema?: unknown }> } }>>;
  components?: { schemas?: Record<string, { properties?: Record<string, unknown> }> };
};

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Every operation of the document, plus the routes it leaves out on purpose (console, MCP's GET/DELETE). */
export function operationsOf(doc: OpenApi): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!HTTP_METHODS.includes(method)) continue;
      const schema = op.requestBody?.content?.['application/json']?.schema as { $ref?: string; properties?: Record<string, unknown> } | undefined;
      const resolved = schema?.$ref ? doc.components?.schemas?.[schema.$ref.split('/').pop()!] : schema;
      ops.push({
        method: method.toUpperCase(),
        path,
        query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
        body: op.requestBody ? Object.keys(resolved?.properties ?? {}) : null,
      });
    }
  }
  const known = new Set(ops.map((o) => `${o.method} ${o.path}`));
  const extras: Operation[] = [
    { method: 'GET', path: '/console', query: [], body: null },
    { method: 'GET', path: '/console/{page}', query: ['token'], body: null },
    { method: 'GET', path: '/docs', query: [], body: null },
    { method: 'GET', path: '/mcp', query: [], body: null },
    { method: 'DELETE', path: '/mcp', query: [], body: null },
    { method: 'POST', path: '/mcp', query: [], body: ['jsonrpc', 'id', 'method', 'params'] },
  ];
  return [...ops, ...extras.filter((o) => !known.has(`${o.method} ${o.path}`))];
}

/** A run of characters no answer has reason to repeat: an answer that holds it echoes the input. */
export const ECHO_MARKER = 'zqjx';
const junk = (n: number) => ECHO_MARKER.repeat(Math.ceil(n / ECHO_MARKER.length)).slice(0, n);

/** Raw (already URL-encoded, some deliberately broken) values for a path segment or a query value. */
const RAW_VALUES = [
  '', '0', '-1', '1.5', '1e309', '-1e309', 'NaN', 'Infinity', '99999999999999999999999999', '-0', '0x1F', 'null', 'true',
  '%5B%5D', '%7B%7D', '%00', '%ZZ', '%', '%E0%A4%A', '%C0%AF', '%FF%FE', '%F0%9F%92%A5', '..%2F..%2Fetc%2Fpasswd', '%2e%2e',
  '%27%20OR%201%3D1--', '%3Cscript%3Ealert(1)%3C%2Fscript%3E', '2024-13-45', '2024-02-30T25:61:00Z', '1970-01-01T00:00:00Z',
  '%20%20', 'a%0D%0AX-Injected:%201', 'sold', 'porsche', 'Porsche', 'desc', 'price', 'cursor', 'eyJrIjoxfQ', '__proto__',
];

const PARAM_NAMES = ['foo', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'limit[]', 'make[a]', 'page[0]', '__proto__[x]', 'constructor[prototype][x]', '%00', ''];

const CONTENT_TYPES = [
  'application/json', 'application/json; charset=utf-8', 'application/JSON', 'text/plain', 'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x', 'application/json; charset=utf-16', 'application/vnd.api+json', 'application/json, text/plain', '',
  'application/*',
];

const BAD_JSON = ['{', '{"a":}', 'undefined', '\uFEFF{}', 'NaN', "{'a':1}", '{"a":1}garbage', '[', '{"a":1,}', '\u0000', ' '];

/**
 * A seeded stream of hostile requests over the given operations: broken and oversized path
 * parameters, unknown, repeated and bracketed query parameters, wrong and deep JSON bodies,
 * prototype keys, bad content types, forged and doubled credentials, oversized headers, other
 * methods. The same seed gives the same requests.
 */
export class HostileRequests {
  private readonly rng: Rng;

  constructor(
    seed: string,
    private readonly operations: readonly Operation[],
    private readonly credentials: FuzzCredentials,
  ) {
    this.rng = new Rng(seed);
  }

  next(): HostileRequest {
    const rng = this.rng;
    const op = rng.pick(this.operations);
    const kinds: string[] = [];
    let method = op.method;
    if (rng.chance(0.12)) {
      method = rng.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD']);
      kinds.push(`method ${method}`);
    }
    const url = this.path(op, kinds) + this.query(op, kinds);
    const headers = this.headers(op, kinds);
    let body: string | undefined;
    if (op.body !== null || rng.chance(0.1)) {
      body = this.body(op, kinds);
      if (body !== undefined && !headers.includes('content-type') && rng.chance(0.9)) headers.push('content-type', 'application/json');
    }
    if (method === 'GET' || method === 'HEAD') body = undefined;
    return { method, url, headers, body, route: `${op.method} ${op.path}`, kind: kinds.join(', ') || 'plain' };
  }

  private path(op: Operation, kinds: string[]): string {
    const rng = this.rng;
    let path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const known = this.credentials.ids[name] ?? [];
      if (known.length > 0 && rng.chance(0.4)) return known[rng.int(0, known.length - 1)];
      const roll = rng.next();
      if (roll < 0.15) return randomUUID();
      if (roll < 0.25) {
        kinds.push('long path parameter');
        return junk(rng.pick([200, 1000, 5000, 12_000]));
      }
      kinds.push('odd path parameter');
      return rng.pick(RAW_VALUES);
    });
    if (rng.chance(0.05)) {
      kinds.push('path suffix');
      path += rng.pick(['/', '//', '/extra', '%2F', '/..', '/.', ';a=b', '/%00']);
    }
    if (rng.chance(0.02)) path = path.toUpperCase();
    return path;
  }

  private query(op: Operation, kinds: string[]): string {
    const rng = this.rng;
    const pairs: string[] = [];
    for (const name of op.query) {
      if (!rng.chance(0.35)) continue;
      const repeat = rng.chance(0.08) ? 2 : 1;
      for (let i = 0; i < repeat; i++) pairs.push(`${encodeURIComponent(name)}=${this.value()}`);
      if (repeat > 1) kinds.push('repeated parameter');
    }
    if (rng.chance(0.2)) {
      kinds.push('unknown parameter');
      pairs.push(`${rng.chance(0.1) ? junk(300) : rng.pick(PARAM_NAMES)}=${this.value()}`);
    }
    if (rng.chance(0.02)) {
      kinds.push('many parameters');
      for (let i = 0; i < 500; i++) pairs.push(`p${i}=${i}`);
    }
    if (pairs.length === 0) return rng.chance(0.05) ? '?' : '';
    return `?${pairs.join('&')}`;
  }

  private value(): string {
    const rng = this.rng;
    const roll = rng.next();
    if (roll < 0.6) return rng.pick(RAW_VALUES);
    if (roll < 0.75) return String(rng.int(-5, 200));
    if (roll < 0.85) return encodeURIComponent(junk(rng.pick([3, 101, 400, 2000])));
    if (roll < 0.95) return encodeURIComponent(`${rng.pick(['Porsche', 'BMW', 'Ferrari'])}${rng.pick(['', ' ', '\t', '\u00a0', '\u200b', '💥'])}`);
    return junk(rng.int(1, 20));
  }

  private headers(op: Operation, kinds: string[]): string[] {
    const rng = this.rng;
    const { apiKey, sessionCookie, csrfToken } = this.credentials;
    const h: string[] = [];
    const auth = rng.next();
    if (auth < 0.6) h.push('authorization', `Bearer ${apiKey}`);
    else if (auth < 0.7) {
      kinds.push('two Authorization headers');
      h.push('authorization', `Bearer ${apiKey}`, 'authorization', `Bearer ${apiKey}`);
    } else if (auth < 0.85) {
      kinds.push('bad Authorization');
      h.push('authorization', rng.pick(['Bearer', 'Bearer ', `Bearer ${junk(600)}`, 'Basic dXNlcjpwYXNz', `Bearer ${apiKey}x`, `bearer\t${apiKey}`, 'Bearer cca_live_']));
    }
    if (op.path.startsWith('/account') || rng.chance(0.1)) {
      const cookie = rng.next();
      // Signing out or changing the password with the real session would end it for the rest of the run.
      const ends = op.path === '/account/signout' || op.path === '/account/password';
      if (cookie < 0.7 && !ends) h.push('cookie', `cars_session=${sessionCookie}`);
      else if (cookie < 0.85) {
        kinds.push('bad cookie');
        h.push('cookie', rng.pick(['cars_session=', `cars_session=${junk(3000)}`, 'cars_session=%ZZ', 'a=b; cars_session=x; cars_session=y', ';;;']));
      }
      if (rng.chance(0.7)) h.push('x-csrf-token', rng.chance(0.8) ? csrfToken : junk(rng.pick([1, 64, 2000])));
    }
    if (rng.chance(0.15)) {
      kinds.push('forged forwarding headers');
      h.push('x-forwarded-for', rng.pick(['not-an-ip', '1.1.1.1, 2.2.2.2', '::1', '999.1.1.1', junk(300)]));
      h.push('x-forwarded-host', rng.pick(['evil.example', junk(300), '']));
      h.push('x-forwarded-proto', rng.pick(['https', 'gopher', '']));
    }
    if (rng.chance(0.1)) {
      kinds.push('foreign origin');
      h.push('origin', rng.pick(['https://evil.example', 'null', junk(200)]));
      h.push('sec-fetch-site', rng.pick(['cross-site', 'same-origin', 'none']));
    }
    if (rng.chance(0.2)) {
      kinds.push('content type');
      h.push('content-type', rng.pick(CONTENT_TYPES));
    }
    if (rng.chance(0.1)) h.push('accept', rng.pick(['text/html', 'application/xml', '*/*', 'application/json, text/event-stream', '']));
    if (op.path === '/mcp' && rng.chance(0.8)) h.push('accept', 'application/json, text/event-stream');
    if (rng.chance(0.01)) {
      kinds.push('oversized header');
      h.push('x-junk', junk(rng.pick([17_000, 40_000])));
    }
    if (rng.chance(0.03)) h.push('if-none-match', rng.pick(['*', '"x"', junk(100)]));
    return h;
  }

  private body(op: Operation, kinds: string[]): string | undefined {
    const rng = this.rng;
    const roll = rng.next();
    if (roll < 0.1) {
      kinds.push('deep JSON');
      const depth = rng.pick([33, 100, 2_000, 5_000]);
      return rng.chance(0.5) ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    }
    if (roll < 0.2) {
      kinds.push('broken JSON');
      return rng.pick(BAD_JSON);
    }
    if (roll < 0.25) {
      kinds.push('oversized body');
      return JSON.stringify({ [op.body?.[0] ?? 'a']: junk(rng.pick([60_000, 70_000, 200_000])) });
    }
    if (roll < 0.3) {
      kinds.push('prototype keys');
      return rng.pick(['{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}', '{"__proto__":[]}']);
    }
    if (roll < 0.35) {
      kinds.push('odd root');
      return rng.pick(['[]', '[{}]', 'null', '"string"', '123', 'true', '1e400', '""']);
    }
    if (roll < 0.38) {
      kinds.push('many keys');
      return JSON.stringify(Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, i])));
    }
    if (roll < 0.4) return undefined;
    const body: Record<string, unknown> = {};
    for (const name of op.body ?? []) if (rng.chance(0.7)) body[name] = this.jsonValue(3);
    if (rng.chance(0.2)) body[rng.pick(PARAM_NAMES)] = this.jsonValue(2);
    if (op.path === '/mcp') return JSON.stringify(this.rpc(kinds));
    return JSON.stringify(body);
  }

  /** A JSON-RPC message (or a batch of them) for /mcp. */
  private rpc(kinds: string[]): unknown {
    const rng = this.rng;
    const one = () => ({
      jsonrpc: rng.chance(0.9) ? '2.0' : rng.pick(['1.0', 2, null]),
      id: rng.pick([1, 'a', null, junk(100), 1e400]),
      method: rng.pick(['tools/call', 'tools/list', 'initialize', 'ping', 'resources/list', junk(50), '']),
      params: rng.chance(0.7)
        ? { name: rng.pick(['search_auctions', 'get_auction_bids', 'price_stats', 'list_makes', junk(40)]), arguments: this.jsonValue(3) }
        : this.jsonValue(2),
    });
    if (rng.chance(0.15)) {
      kinds.push('JSON-RPC batch');
      return Array.from({ length: rng.pick([2, 20, 100]) }, one);
    }
    return one();
  }

  private jsonValue(depth: number): unknown {
    const rng = this.rng;
    const roll = rng.next();
    if (roll < 0.25) return rng.pick(['', ' ', 'https://example.com/hook', 'http://127.0.0.1:1/', 'auction.created', 'Porsche', junk(rng.pick([5, 300, 5000])), '\u0000', '💥', '2024-01-01T00:00:00Z']);
    if (roll < 0.45) return rng.pick([0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, 100, 1000]);
    if (roll < 0.55) return rng.chance(0.5);
    if (roll < 0.65) return null;
    if (depth <= 0) return {};
    if (roll < 0.8) {
      // A long list holds plain values: nested long lists would make megabytes in this process.
      const length = rng.pick([0, 1, 3, 1000]);
      return Array.from({ length }, (_, i) => (length > 3 ? i : this.jsonValue(depth - 1)));
    }
    const object: Record<string, unknown> = {};
    for (let i = rng.int(0, 4); i > 0; i--) object[rng.pick(['make', 'source', 'a', '__proto__', 'constructor', junk(30)])] = this.jsonValue(depth - 1);
    return object;
  }
}
