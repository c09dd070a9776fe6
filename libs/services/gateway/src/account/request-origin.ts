import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ErrorNames } from '@cars/contracts';
import { ApiException } from '../http/api-exception';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function isStateChanging(request: FastifyRequest): boolean {
  return !SAFE_METHODS.has(request.method);
}

/**
 * The origin the connection reached: the gateway's own address and port as the socket has them,
 * never a request header (Host and X-Forwarded-Host are the client's to choose), e.g.
 * http://127.0.0.1:3000 in the quick start. Where links point and which Origin is this site
 * when PUBLIC_BASE_URL is unset.
 */
export function listenOrigin(request: FastifyRequest): string {
  const socket = request.raw.socket;
  const address = (socket.localAddress ?? '127.0.0.1').replace(/^::ffff:(?=\d+\.)/, '');
  return `http://${address.includes(':') ? `[${address}]` : address}:${socket.localPort}`;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/**
 * The origins this site's own pages have: PUBLIC_BASE_URL, and the origin the connection reached
 * (under each loopback name when that is a loopback address: the quick start opened as
 * http://localhost:3000).
 */
function ownOrigins(request: FastifyRequest, publicBaseUrl: string | undefined): string[] {
  const reached = new URL(listenOrigin(request));
  const hosts = LOOPBACK_NAMES.includes(reached.hostname) ? LOOPBACK_NAMES : [reached.hostname];
  return [...(publicBaseUrl ? [publicBaseUrl] : []), ...hosts.map((host) => `http://${host}:${reached.port}`)].map((o) => o.toLowerCase());
}

function forbidden(message: string): ApiException {
  return new ApiException(403, { error: ErrorNames.Forbidden, message });
}

/**
 * Refuses a state-changing request a browser sent on behalf of another site: an `Origin` header
 * (browsers send it on every cross-origin and every non-GET request) that is neither
 * PUBLIC_BASE_URL nor the origin the connection reached (never one a header names), or
 * `Sec-Fetch-Site: cross-site`. Requests without
 * these headers (scripts, curl) pass: they carry no ambient cookie of a victim's browser.
 */
export function assertSameSite(request: FastifyRequest, publicBaseUrl: string | undefined): void {
  if (request.headers['sec-fetch-site'] === 'cross-site') {
    throw forbidden('Cross-site request refused: the account area accepts changes from its own pages only');
  }
  const origin = request.headers.origin;
  if (origin === undefined) return;
  if (!ownOrigins(request, publicBaseUrl).includes(origin.toLowerCase())) {
    throw forbidden('Cross-site request refused: the Origin header names another site than this one');
  }
}

/** The CSRF token of a state-changing request must equal the session's (header X-CSRF-Token). */
export function assertCsrfToken(request: FastifyRequest, expected: string): void {
  const sent = request.headers['x-csrf-token'];
  if (typeof sent !== 'string' || sent.length === 0) {
    throw forbidden('Missing X-CSRF-Token header: send the csrf_token of GET /account/session with every change');
  }
  if (!constantTimeEqual(sent, expected)) {
    throw forbidden('Wrong X-CSRF-Token header: send the csrf_token of GET /account/session with every change');
  }
}

function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
