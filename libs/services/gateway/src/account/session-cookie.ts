import { isIP } from 'node:net';
import { parse as parseCookies, serialize as serializeCookie } from 'cookie';
import type { FastifyRequest } from 'fastify';

/** The console session cookie: an opaque token (the database holds only its hash). */
export const SESSION_COOKIE = 'cars_session';

/** `localhost`, `*.localhost`, 127.0.0.0/8, `::1` (with or without brackets). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/**
 * `Secure` unless the request reached a loopback host over plain HTTP (the quick start on
 * 127.0.0.1): a browser would drop a Secure cookie there. Behind a TLS-terminating proxy, list
 * it in TRUSTED_PROXIES so its X-Forwarded-Proto counts; any non-loopback host gets `Secure` anyway.
 */
export function cookieIsSecure(request: FastifyRequest): boolean {
  return request.protocol === 'https' || !isLoopbackHost(request.hostname);
}

/** The session token the request carries, or undefined. */
export function sessionTokenOf(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  return header ? parseCookies(header)[SESSION_COOKIE] || undefined : undefined;
}

function serialize(value: string, options: { secure: boolean; maxAge: number }): string {
  return serializeCookie(SESSION_COOKIE, value, { path: '/', maxAge: options.maxAge, httpOnly: true, sameSite: 'strict', secure: options.secure });
}

/** Set-Cookie of a new session: HttpOnly, SameSite=Strict, Path=/, Secure outside loopback; lives until the absolute expiry. */
export function sessionCookie(request: FastifyRequest, token: string, expiresAt: Date, now: Date): string {
  return serialize(token, {
    secure: cookieIsSecure(request),
    maxAge: Math.max(0, Math.floor((expiresAt.getTime() - now.getTime()) / 1000)),
  });
}

/** Set-Cookie that removes the session cookie. */
export function clearedSessionCookie(request: FastifyRequest): string {
  return serialize('', { secure: cookieIsSecure(request), maxAge: 0 });
}
