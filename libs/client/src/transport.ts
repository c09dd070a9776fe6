import { ApiError, apiErrorFrom, ConflictError, parseRateLimit, RateLimitError, RateLimitInfo, ServiceUnavailableError } from './errors';

/** The part of `fetch` the client uses (the global one, undici's, or a test's fake). */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal },
) => Promise<{ status: number; headers: { get(name: string): string | null }; text(): Promise<string> }>;

export interface TransportOptions {
  /** e.g. `https://api.example.com` (a path prefix is kept). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>` on every route that needs a key. */
  apiKey?: string;
  fetch?: FetchLike;
  /**
   * How many times a request refused by the burst limit (429 with `Retry-After`) is sent again
   * after waiting as told; 0 turns this off. A GET answered 503 with `Retry-After` (a service
   * did not answer in time) is retried the same way. Default 3.
   */
  maxRetries?: number;
  /** A `Retry-After` longer than this is not waited for: the error is thrown. Default 60 s. */
  maxRetryDelayMs?: number;
  /**
   * How long, in all, `webhooks.delete` keeps waiting out a 409 that carries `Retry-After` (a
   * delivery attempt to the endpoint is in flight, e.g. right after a test) before it throws the
   * ConflictError; 0 turns this off. Default 30 s (an attempt ends within 10 s).
   */
  maxConflictWaitMs?: number;
  /** Extra headers on every request (e.g. a User-Agent of yours). */
  headers?: Record<string, string>;
  /** How the client waits before a retry (default: a timer; tests pass a fake). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface RequestOptions {
  signal?: AbortSignal;
}

export type QueryValue = string | number | boolean | null | undefined;

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  /** Public routes never carry the key. */
  authenticated: boolean;
  /** Statuses other than 2xx that are answers, not errors (e.g. 503 of /health/ready). */
  accept?: number[];
  /** A 409 with `Retry-After` is a passing state (an attempt in flight): wait and send again, within maxConflictWaitMs. */
  waitOutConflict?: boolean;
  signal?: AbortSignal;
}

export const DEFAULT_MAX_RETRIES = 3;
export const DEFAULT_MAX_RETRY_DELAY_MS = 60_000;
export const DEFAULT_MAX_CONFLICT_WAIT_MS = 30_000;

/** Sends requests, parses JSON, maps errors and waits out burst limits. */
export class Transport {
  private readonly baseUrl: string;
  private readonly fetch: FetchLike;
  private readonly maxRetries: number;
  private readonly maxRetryDelayMs: number;
  private readonly maxConflictWaitMs: number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The monthly allowance as the latest counted response reported it. */
  rateLimit: RateLimitInfo | undefined;

  constructor(private readonly options: TransportOptions) {
    if (!options.baseUrl) throw new TypeError('baseUrl is required, e.g. https://api.example.com');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    const fetchImpl = options.fetch ?? (globalThis.fetch as FetchLike | undefined);
    if (!fetchImpl) throw new TypeError('no fetch: pass options.fetch (Node 18+ and browsers have one)');
    this.fetch = fetchImpl;
    this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS;
    this.maxConflictWaitMs = options.maxConflictWaitMs ?? DEFAULT_MAX_CONFLICT_WAIT_MS;
    this.sleep = options.sleep ?? delay;
  }

  async send<T>(request: ApiRequest): Promise<T> {
    const url = `${this.baseUrl}${request.path}${queryString(request.query)}`;
    const headers: Record<string, string> = { accept: 'application/json', ...this.options.headers };
    if (request.authenticated && this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);
    if (body !== undefined) headers['content-type'] = 'application/json';

    let retries = 0;
    let conflictWaitedMs = 0;
    for (;;) {
      const response = await this.fetch(url, { method: request.method, headers, body, signal: request.signal });
      this.rateLimit = parseRateLimit(response.headers) ?? this.rateLimit;
      const text = await response.text();
      const parsed = parseBody(text);
      const answered = (response.status >= 200 && response.status < 300) || (request.accept ?? []).includes(response.status);
      if (answered) {
        if (!parsed.ok) throw new ApiError({ status: response.status, headers: response.headers, body: text });
        return parsed.value as T;
      }
      const error = apiErrorFrom({ status: response.status, headers: response.headers, body: parsed.ok ? parsed.value : text });
      if (request.waitOutConflict && error instanceof ConflictError && error.retryAfter !== undefined) {
        // Its own budget: the conflict passes by itself (an attempt ends), unlike a limit.
        const wait = error.retryAfter * 1000;
        if (conflictWaitedMs + wait > this.maxConflictWaitMs) throw error;
        conflictWaitedMs += wait;
        await this.sleep(wait, request.signal);
        continue;
      }
      const wait = this.retryDelayMs(error, request.method, retries);
      if (wait === undefined) throw error;
      retries += 1;
      await this.sleep(wait, request.signal);
    }
  }

  /** How long to wait before sending again, or undefined to give up with the error. */
  private retryDelayMs(error: ApiError, method: ApiRequest['method'], attempt: number): number | undefined {
    // A burst 429 was refused before anything ran, so any method may go again; a 503 may have
    // run (e.g. created a webhook), so only a GET does.
    const retryable = (error instanceof RateLimitError && error.kind === 'burst') || (error instanceof ServiceUnavailableError && method === 'GET');
    if (!retryable || error.retryAfter === undefined || attempt >= this.maxRetries) return undefined;
    const ms = error.retryAfter * 1000;
    return ms > this.maxRetryDelayMs ? undefined : ms;
  }
}

function queryString(query: Record<string, QueryValue> | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) params.append(name, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

function parseBody(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Encodes one path segment (ids come from callers). */
export function segment(value: string | number): string {
  return encodeURIComponent(String(value));
}
