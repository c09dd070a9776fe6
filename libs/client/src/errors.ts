import type { ErrorBody } from './api-types';

/** The monthly allowance as the last counted response reported it (`X-RateLimit-*`). */
export interface RateLimitInfo {
  /** The plan's requests per billing period. */
  limit: number;
  remaining: number;
  /** Start of the next billing period (calendar month, UTC). */
  resetsAt: Date;
}

/** What an error was made from: the status, the headers and the body as received. */
export interface ErrorResponse {
  status: number;
  headers: { get(name: string): string | null };
  /** The parsed JSON body, or the raw text when it was not JSON. */
  body: unknown;
}

/**
 * Any answer other than 2xx, with the API's error body (`{error, message, details?}`). The
 * subclasses name the statuses a caller handles differently; anything else is an `ApiError`.
 */
export class ApiError extends Error {
  override readonly name: string = 'ApiError';
  readonly status: number;
  /** The error value, e.g. `Validation Error`, `Rate Limit Exceeded`. */
  readonly error: string;
  /** Validation errors (400): each parameter or member mapped to its messages. */
  readonly details: Record<string, string[]> | undefined;
  /** Seconds to wait before trying again (`Retry-After`), when the response said. */
  readonly retryAfter: number | undefined;
  /** The monthly allowance, on responses of counted routes. */
  readonly rateLimit: RateLimitInfo | undefined;
  readonly body: unknown;

  constructor(response: ErrorResponse) {
    const envelope = errorEnvelope(response.body);
    super(envelope?.message ?? `HTTP ${response.status}`);
    this.status = response.status;
    this.error = envelope?.error ?? `HTTP ${response.status}`;
    this.details = envelope?.details;
    this.retryAfter = parseRetryAfter(response.headers.get('retry-after'));
    this.rateLimit = parseRateLimit(response.headers);
    this.body = response.body;
  }
}

/** 400 `Validation Error`: `details` names every bad parameter or member. */
export class ValidationError extends ApiError {
  override readonly name = 'ValidationError';
}

/** 401 `Unauthorized`: a missing or invalid API key. */
export class UnauthorizedError extends ApiError {
  override readonly name = 'UnauthorizedError';
}

/** 403 `Forbidden`: the plan (e.g. `/stats` on Free) or the account (webhooks need a verified email). */
export class ForbiddenError extends ApiError {
  override readonly name = 'ForbiddenError';
}

/** 404 `Not Found`: an unknown auction, webhook or delivery id. */
export class NotFoundError extends ApiError {
  override readonly name = 'NotFoundError';
}

/** 409 `Conflict`: an endpoint allowance, a test cooldown, a delivery state that forbids the call. */
export class ConflictError extends ApiError {
  override readonly name = 'ConflictError';
}

/**
 * 429 `Rate Limit Exceeded`. `burst`: too many requests per second for the key, `retryAfter`
 * says when a token is back (the client waits and retries these by itself, see `maxRetries`).
 * `monthly`: the plan's allowance is used up until `rateLimit.resetsAt`; retrying does not help.
 */
export class RateLimitError extends ApiError {
  override readonly name = 'RateLimitError';
  readonly kind: 'burst' | 'monthly';

  constructor(response: ErrorResponse) {
    super(response);
    // The monthly answer names the monthly limit and carries no Retry-After (it would be days).
    this.kind = /monthly/i.test(this.message) || this.retryAfter === undefined ? 'monthly' : 'burst';
  }
}

/** 503 `Service Unavailable`: a service behind the gateway did not answer in time (`Retry-After`). */
export class ServiceUnavailableError extends ApiError {
  override readonly name = 'ServiceUnavailableError';
}

const BY_STATUS: Record<number, new (response: ErrorResponse) => ApiError> = {
  400: ValidationError,
  401: UnauthorizedError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  429: RateLimitError,
  503: ServiceUnavailableError,
};

/** The typed error of a non-2xx response. */
export function apiErrorFrom(response: ErrorResponse): ApiError {
  const Type = BY_STATUS[response.status] ?? ApiError;
  return new Type(response);
}

function errorEnvelope(body: unknown): ErrorBody | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { error, message, details } = body as Record<string, unknown>;
  if (typeof error !== 'string' || typeof message !== 'string') return undefined;
  return { error, message, ...(isDetails(details) ? { details } : {}) };
}

function isDetails(value: unknown): value is Record<string, string[]> {
  return typeof value === 'object' && value !== null && Object.values(value).every((v) => Array.isArray(v));
}

/** `Retry-After` in seconds: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

export function parseRateLimit(headers: { get(name: string): string | null }): RateLimitInfo | undefined {
  const [limit, remaining, reset] = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'].map((name) => {
    const value = headers.get(name);
    return value !== null && /^\d+$/.test(value) ? Number(value) : undefined;
  });
  if (limit === undefined || remaining === undefined || reset === undefined) return undefined;
  return { limit, remaining, resetsAt: new Date(reset * 1000) };
}
