import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Where the console is served. */
export const CONSOLE_PATH = '/console';

/**
 * The console's Content-Security-Policy: everything from this origin, nothing inline (styles set
 * through the CSSOM by scripts, as uPlot does, are not inline styles), no framing, no plugins.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  // The verification link carries its token in the query: never hand it on as a referrer.
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
};

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

/** Files whose name carries a content hash (`app-3F2A9C1B.js`) never change: cache them for a year. */
const HASHED_NAME = /-[A-Z0-9]{8}\.[a-z0-9]+(\.map)?$/;

interface StaticFile {
  body: Buffer;
  gzip: Buffer | null;
  contentType: string;
  cacheControl: string;
  etag: string;
}

export interface ConsoleSite {
  /** The folder served, or null when the console has not been built. */
  root: string | null;
  files: ReadonlyMap<string, StaticFile>;
}

/**
 * The built console (`npm run build` bundles it into dist/libs/console/static): next to the
 * compiled module in dist/, or under dist/ when this runs from the TypeScript sources (jest).
 */
export function findConsoleBuild(): string | null {
  const candidates = [join(__dirname, '..', 'static')];
  for (let dir = __dirname; dirname(dir) !== dir; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'nx.json'))) {
      candidates.push(join(dir, 'dist', 'libs', 'console', 'static'));
      break;
    }
  }
  return candidates.find((dir) => existsSync(join(dir, 'index.html'))) ?? null;
}

/** Reads the whole bundle into memory once (it is small), with gzip forms and validators. */
export function loadConsoleSite(root: string | null): ConsoleSite {
  const files = new Map<string, StaticFile>();
  if (root === null) return { root, files };
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(path);
        continue;
      }
      if (!entry.isFile() || statSync(path).size > 5 * 1024 * 1024) continue;
      const name = relative(root, path).split(sep).join('/');
      const body = readFileSync(path);
      const contentType = CONTENT_TYPES[extname(name)] ?? 'application/octet-stream';
      const compressible = /^(text\/|application\/json|image\/svg)/.test(contentType) && body.length > 1024;
      files.set(name, {
        body,
        gzip: compressible ? gzipSync(body, { level: 9 }) : null,
        contentType,
        cacheControl: HASHED_NAME.test(name)
          ? 'public, max-age=31536000, immutable'
          : name === 'index.html'
            ? 'no-cache'
            : 'public, max-age=3600',
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
      });
    }
  };
  walk(root);
  return { root, files };
}

/**
 * Serves the console at /console: the bundle's files by name, and index.html for every other
 * path under /console (the pages are routed in the browser). Plain Fastify routes, outside Nest's
 * controllers: no API key, never metered, not in the OpenAPI document.
 */
export function registerConsoleRoutes(fastify: FastifyInstance, site: ConsoleSite): void {
  const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.header(name, value);
    const index = site.files.get('index.html');
    if (!index) {
      return reply
        .code(503)
        .header('content-type', 'text/plain; charset=utf-8')
        .header('cache-control', 'no-store')
        .send('The account console has not been built: run `npm run build` (npm start does it).\n');
    }
    const path = decodeSafely((request.url.split('?')[0] ?? '').slice(CONSOLE_PATH.length).replace(/^\/+/, ''));
    const file = path === null ? undefined : site.files.get(path);
    if (file === undefined && path !== null && /^assets\/|\.[a-z0-9]{2,5}$/i.test(path)) {
      // A missing asset is a 404, not the page: a stale index.html would otherwise parse HTML as script.
      return reply
        .code(404)
        .header('content-type', 'application/json; charset=utf-8')
        .header('cache-control', 'no-store')
        .send({ error: 'Not Found', message: `No console file ${CONSOLE_PATH}/${path}` });
    }
    return send(request, reply, file ?? index);
  };
  fastify.get(CONSOLE_PATH, handler);
  fastify.get(`${CONSOLE_PATH}/*`, handler);
}

function send(request: FastifyRequest, reply: FastifyReply, file: StaticFile): FastifyReply {
  reply.header('content-type', file.contentType).header('cache-control', file.cacheControl).header('etag', file.etag);
  if (file.gzip) reply.header('vary', 'accept-encoding');
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  const acceptsGzip = /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
  if (file.gzip && acceptsGzip) return reply.header('content-encoding', 'gzip').send(file.gzip);
  return reply.send(file.body);
}

/** The decoded path, or null when it is malformed or tries to leave the folder. */
function decodeSafely(path: string): string | null {
  try {
    const decoded = decodeURIComponent(path);
    return decoded.split('/').some((part) => part === '..' || part === '.') || decoded.includes('\\') || decoded.includes('\0')
      ? null
      : decoded;
  } catch {
    return null;
  }
}
