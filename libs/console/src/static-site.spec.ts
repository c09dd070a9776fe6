import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import Fastify, { FastifyInstance } from 'fastify';
import { CONSOLE_CSP, loadConsoleSite, registerConsoleRoutes } from './static-site';

describe('console static site', () => {
  let dir: string;
  let app: FastifyInstance;
  const script = `console.log(${JSON.stringify('x'.repeat(4000))});`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'console-site-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Console</title><script type="module" src="/console/assets/app-ABCD1234.js"></script>');
    writeFileSync(join(dir, 'assets', 'app-ABCD1234.js'), script);
    writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    writeFileSync(join(dir, 'secret.txt'), 'not outside');
    app = Fastify();
    registerConsoleRoutes(app, loadConsoleSite(dir));
    await app.ready();
  });

  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves index.html at /console and for every page path (the pages are routed in the browser)', async () => {
    for (const url of ['/console', '/console/', '/console/webhooks/whe_1/edit', '/console/verify?token=abc']) {
      const res = await app.inject({ url });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.body).toContain('<title>Console</title>');
    }
  });

  it('sends a strict Content-Security-Policy and the other security headers on every answer', async () => {
    for (const url of ['/console', '/console/assets/app-ABCD1234.js', '/console/assets/missing-ABCD1234.js']) {
      const res = await app.inject({ url });
      expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['x-frame-options']).toBe('DENY');
    }
    expect(CONSOLE_CSP).toContain("default-src 'self'");
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toContain('unsafe-inline');
    expect(CONSOLE_CSP).not.toContain('unsafe-eval');
  });

  it('serves hashed assets with their content type, for a year, gzipped on request, with an ETag', async () => {
    const plain = await app.inject({ url: '/console/assets/app-ABCD1234.js' });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.body).toBe(script);

    const gzipped = await app.inject({ url: '/console/assets/app-ABCD1234.js', headers: { 'accept-encoding': 'gzip, br' } });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzipped.rawPayload).toString()).toBe(script);

    const again = await app.inject({ url: '/console/assets/app-ABCD1234.js', headers: { 'if-none-match': String(plain.headers.etag) } });
    expect(again.statusCode).toBe(304);

    const icon = await app.inject({ url: '/console/favicon.svg' });
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    expect(icon.headers['cache-control']).toBe('public, max-age=3600');
  });

  it('answers 404 for a missing asset (never the page in its place) and never leaves the folder', async () => {
    const missing = await app.inject({ url: '/console/assets/app-OLDHASH1.js' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: 'Not Found' });
    for (const url of ['/console/..%2f..%2fpackage.json', '/console/assets/..%2F..%2Fsecret.txt', '/console/%E0%A4%A']) {
      const res = await app.inject({ url });
      expect([200, 400, 404]).toContain(res.statusCode); // 400: Fastify refuses a malformed escape
      expect(res.body).not.toContain('"name"');
    }
  });

  it('answers HEAD like GET without a body', async () => {
    const res = await app.inject({ method: 'HEAD', url: '/console/keys' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('');
  });

  it('says how to build it when the bundle is missing', async () => {
    const bare = Fastify();
    registerConsoleRoutes(bare, loadConsoleSite(null));
    const res = await bare.inject({ url: '/console' });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('npm run build');
    await bare.close();
  });
});
