import type { FastifyRequest } from 'fastify';
import { ApiException } from '../http/api-exception';
import { assertCsrfToken, assertSameSite } from './request-origin';
import { clearedSessionCookie, isLoopbackHost, sessionCookie, sessionTokenOf } from './session-cookie';

function req(fields: { headers?: Record<string, string>; protocol?: 'http' | 'https'; host?: string; method?: string }): FastifyRequest {
  const host = fields.host ?? '127.0.0.1:3000';
  return {
    headers: fields.headers ?? {},
    protocol: fields.protocol ?? 'http',
    host,
    hostname: host.replace(/:\d+$/, ''),
    method: fields.method ?? 'POST',
    raw: { socket: { localAddress: '127.0.0.1', localPort: 3000 } },
  } as unknown as FastifyRequest;
}

function statusOf(fn: () => void): number | null {
  try {
    fn();
    return null;
  } catch (error) {
    return error instanceof ApiException ? error.getStatus() : -1;
  }
}

describe('session cookie', () => {
  it('knows loopback hosts', () => {
    for (const host of ['localhost', 'app.localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]']) expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['cars.example.com', '10.0.0.1', 'localhost.example.com', '128.0.0.1', '::2']) expect(isLoopbackHost(host)).toBe(false);
  });

  it('is HttpOnly, SameSite=Strict, Path=/ and lives until the absolute expiry; Secure outside plain-HTTP loopback', () => {
    const now = new Date('2026-11-25T12:00:00Z');
    const expires = new Date('2026-12-02T12:00:00Z');
    expect(sessionCookie(req({}), 'tok', expires, now)).toBe('cars_session=tok; Max-Age=604800; Path=/; HttpOnly; SameSite=Strict');
    expect(sessionCookie(req({ host: 'cars.example.com' }), 'tok', expires, now)).toMatch(/; HttpOnly; Secure; SameSite=Strict$/);
    expect(sessionCookie(req({ protocol: 'https' }), 'tok', expires, now)).toMatch(/; Secure; SameSite=Strict$/);
    expect(clearedSessionCookie(req({}))).toBe('cars_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Strict');
  });

  it('reads only the cars_session pair of the Cookie header', () => {
    expect(sessionTokenOf(req({ headers: { cookie: 'a=1; cars_session=abc; b=2' } }))).toBe('abc');
    expect(sessionTokenOf(req({ headers: { cookie: 'xcars_session=abc' } }))).toBeUndefined();
    expect(sessionTokenOf(req({ headers: { cookie: 'cars_session=' } }))).toBeUndefined();
    expect(sessionTokenOf(req({}))).toBeUndefined();
  });
});

describe('cross-site and CSRF checks', () => {
  it('passes its own origin, PUBLIC_BASE_URL and requests without Origin; refuses any other origin and Sec-Fetch-Site: cross-site', () => {
    expect(statusOf(() => assertSameSite(req({ headers: { origin: 'http://127.0.0.1:3000' } }), undefined))).toBeNull();
    expect(statusOf(() => assertSameSite(req({}), undefined))).toBeNull();
    expect(statusOf(() => assertSameSite(req({ headers: { origin: 'https://cars.example.com' } }), 'https://cars.example.com'))).toBeNull();
    expect(statusOf(() => assertSameSite(req({ headers: { origin: 'https://evil.example' } }), 'https://cars.example.com'))).toBe(403);
    expect(statusOf(() => assertSameSite(req({ headers: { origin: 'null' } }), undefined))).toBe(403);
    expect(statusOf(() => assertSameSite(req({ headers: { origin: 'http://127.0.0.1:3001' } }), undefined))).toBe(403);
    // The connection reached a loopback address: the same port under another loopback name is this site.
    expect(statusOf(() => assertSameSite(req({ headers: { origin: 'http://localhost:3000' } }), undefined))).toBeNull();
    // A Host or X-Forwarded-Host header does not make another origin this site's.
    const forged = req({ headers: { origin: 'https://evil.example', 'x-forwarded-host': 'evil.example' }, host: 'evil.example', protocol: 'https' });
    expect(statusOf(() => assertSameSite(forged, undefined))).toBe(403);
    expect(statusOf(() => assertSameSite(req({ headers: { 'sec-fetch-site': 'cross-site' } }), undefined))).toBe(403);
    expect(statusOf(() => assertSameSite(req({ headers: { 'sec-fetch-site': 'same-origin' } }), undefined))).toBeNull();
  });

  it('needs the exact CSRF token', () => {
    const token = 'A'.repeat(43);
    expect(statusOf(() => assertCsrfToken(req({ headers: { 'x-csrf-token': token } }), token))).toBeNull();
    expect(statusOf(() => assertCsrfToken(req({}), token))).toBe(403);
    expect(statusOf(() => assertCsrfToken(req({ headers: { 'x-csrf-token': 'B'.repeat(43) } }), token))).toBe(403);
    expect(statusOf(() => assertCsrfToken(req({ headers: { 'x-csrf-token': token.slice(1) } }), token))).toBe(403);
  });
});
