import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ErrorNames } from '@cars/contracts';
import { ApiException } from '../http/api-exception';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function isStateChanging(request: FastifyRequest): boolean {
  return !SAFE_METHODS.has(request.method);
}

/** The origin the request came to: scheme and host (X-Forwarded-Proto/-Host when the gateway trusts its proxy). */
export function requestOrigin(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

function forbidden(message: string): ApiException {
  return new ApiException(403, { error: ErrorNames.Forbidden, message });
}

/**
 * Refuses a state-changing request a browser sent on behalf of another site: an `Origin` header
 * (browsers send it on every cross-origin and every non-GET request) that is neither the origin
 * the request came to nor PUBLIC_BASE_URL, or `Sec-Fetch-Site: cross-site`. Requests without
 * these headers (scripts, curl) pass: they carry no ambient cookie of a victim's browser.
 */
export function assertSameSite(request: FastifyRequest, publicBaseUrl: string | undefined): void {
  if (request.headers['sec-fetch-site'] === 'cross-site') {
    throw forbidden('Cross-site request refused: the account area accepts changes from its own pages only');
  }
  const origin = request.headers.origin;
  if (origin === undefined) return;
  const allowed = [requestOrigin(request), ...(publicBaseUrl ? [publicBaseUrl] : [])].map((o) => o.toLowerCase());
  if (!allowed.includes(origin.toLowerCase())) {
    throw forbidden(`Cross-site request refused: Origin ${origin.slice(0, 200)} is not this site`);
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
