import { IncomingMessage, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { LoggerService, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorBody, jsonNestingExceeds, MAX_JSON_DEPTH, notFound, validationError } from '@cars/contracts';
import {
  applyHttpTimeouts,
  GatewayEdgeEnv,
  httpServerOptions,
  HttpTimeouts,
  httpTimeoutsOf,
  invalidTrustedProxyEntries,
  loadEnv,
  trustedProxyEntries,
} from '@cars/runtime';
import { ApiException } from './http/api-exception';
import { ErrorEnvelopeFilter, errorNameOf, frameworkErrorResponse, noRoute } from './http/error.filter';
import { applyStrictQuery } from './http/strict-query.guard';
import { endWorkWithHandlers } from './metering/in-flight';
import { createValidationPipe } from './http/validation.pipe';
import { instrumentGateway } from './metrics/gateway.metrics';
import { setUpOpenApi } from './openapi';

/** The gateway's HTTP edge (docs/operations.md, "The HTTP edge"). */
export interface GatewayEdgeSettings {
  /** Peers (addresses, CIDR ranges) whose X-Forwarded-For/-Proto/-Host are believed; empty: nobody's. */
  trustedProxies: string[];
  timeouts: HttpTimeouts;
}

export interface GatewayHttpOptions {
  logger: LoggerService;
  /** Settings of the edge instead of the environment's (TRUSTED_PROXIES, HTTP_*_TIMEOUT_MS). */
  edge?: Partial<GatewayEdgeSettings>;
}

/** TRUSTED_PROXIES and HTTP_*_TIMEOUT_MS (validated: a bad value fails the boot), then any overrides. */
export function loadGatewayEdgeSettings(env: NodeJS.ProcessEnv = process.env, overrides: Partial<GatewayEdgeSettings> = {}): GatewayEdgeSettings {
  const e = loadEnv(GatewayEdgeEnv, env);
  const settings = { trustedProxies: trustedProxyEntries(e.TRUSTED_PROXIES), timeouts: httpTimeoutsOf(e), ...overrides };
  const invalid = invalidTrustedProxyEntries(settings.trustedProxies.join(','));
  if (invalid.length > 0) throw new Error(`Trusted proxies must be IP addresses or CIDR ranges (not: ${invalid.join(', ')})`);
  return settings;
}

/** Creates the gateway's Fastify application around a root module (gateway app or standalone). */
export async function createGatewayApp(root: Type<unknown>, options: GatewayHttpOptions): Promise<NestFastifyApplication> {
  const edge = loadGatewayEdgeSettings(process.env, options.edge);
  const adapter = new FastifyAdapter({
    // X-Forwarded-* count only from a trusted peer (proxy-addr walks X-Forwarded-For from the socket's address).
    trustProxy: edge.trustedProxies.length > 0 ? edge.trustedProxies : false,
    bodyLimit: 64 * 1024,
    // Request logging is ours (no Authorization header ever reaches a log line).
    logger: false,
    routerOptions: { ignoreTrailingSlash: true },
    http: httpServerOptions(edge.timeouts),
    connectionTimeout: edge.timeouts.idleMs,
    keepAliveTimeout: edge.timeouts.keepAliveMs,
    requestTimeout: edge.timeouts.requestMs,
    clientErrorHandler: answerClientError,
    frameworkErrors: (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
      const { status, body } = frameworkErrorResponse(error) ?? { status: 500, body: { error: errorNameOf(500), message: 'An unexpected error occurred' } };
      void reply.code(status).type('application/json; charset=utf-8').send(body);
    },
  });
  applyHttpTimeouts(adapter.getInstance().server, edge.timeouts);
  endWorkWithHandlers(adapter.getInstance());
  const app = await NestFactory.create<NestFastifyApplication>(root, adapter, {
    logger: options.logger,
    bufferLogs: false,
    // JSON is the one body type; its parser is ours (below), so Nest registers none.
    bodyParser: false,
  });
  answerConnectRequests(adapter);
  parseJsonBodies(adapter);
  instrumentGateway(adapter.getInstance());
  app.useGlobalFilters(new ErrorEnvelopeFilter());
  app.useGlobalPipes(createValidationPipe());
  applyStrictQuery(app);
  setUpOpenApi(app);
  return app;
}

/**
 * The gateway's clean stop: first the HTTP server stops taking requests (new ones on open
 * connections get 503 with `connection: close`, idle keep-alive connections are closed) and the
 * requests in flight are answered; only then do the modules close their pools and broker clients.
 * (Nest's own `close()` runs the modules' shutdown hooks before closing the server, which strands
 * the requests in flight.)
 */
export async function closeGatewayApp(app: NestFastifyApplication): Promise<void> {
  // Closing the server closes the connections idle at that moment; a keep-alive connection whose
  // request is answered later would keep it open until its keep-alive timeout: close those as they
  // turn idle.
  const server = app.getHttpServer() as { closeIdleConnections?: () => void };
  const sweep = setInterval(() => server.closeIdleConnections?.(), 25);
  try {
    await app.getHttpAdapter().close();
  } finally {
    clearInterval(sweep);
  }
  await app.close();
}

const NOT_JSON = 'The body is not valid JSON';
const TOO_DEEP = `The body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep`;

/**
 * The one JSON body parser. `POST /webhooks/{id}/test` and the other routes without a body are
 * often called with `content-type: application/json` and nothing after it (HTTP clients set the
 * header by default): an empty JSON body is no body, not a 400. A body nested deeper than
 * MAX_JSON_DEPTH is refused (400) before it is parsed, so neither the parser nor a validator ever
 * recurses through it. Anything else goes through Fastify's own parser (prototype-poisoning
 * protection included). The size limit (64 KB) is Fastify's, before this.
 */
function parseJsonBodies(adapter: FastifyAdapter): void {
  const fastify = adapter.getInstance();
  const json = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    if (jsonNestingExceeds(text, MAX_JSON_DEPTH)) return done(new ApiException(400, validationError({ body: [TOO_DEEP] }, TOO_DEEP)), undefined);
    // Fastify's own error says nothing more; a SyntaxError's message would quote the body.
    return json(request, text, (error, value) => (error ? done(new ApiException(400, validationError({ body: [NOT_JSON] }, NOT_JSON)), undefined) : done(null, value)));
  });
}

/** A whole HTTP/1.1 response written on a socket Node's parser has given up on, then the socket closed. */
function answerAndClose(socket: Duplex, status: number, body: ErrorBody): void {
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(text)}\r\n` +
      'Connection: close\r\n\r\n' +
      text,
  );
  // Closed once the peer has read the answer and closed its side, or after a second: closing at
  // once while the rest of its request still arrives would reset the connection, which can
  // lose the answer.
  const close = () => socket.destroy();
  socket.once('end', close);
  setTimeout(close, 1000).unref();
}

/** What Node's HTTP parser refused, by its error code. */
const CLIENT_ERRORS: Record<string, { status: number; message: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, message: 'The request headers are larger than 16 KB' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: 'The request did not arrive in time' },
};

/**
 * Node answers what its HTTP parser refuses (headers too large, a request that took too long, not
 * HTTP at all) itself, outside the error envelope: answer it in the envelope, with
 * `Connection: close` since the connection is closed after it (a keep-alive client then knows not
 * to send its next request on it), unless a response had begun on the socket already.
 */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // Destroyed, or answered already (the rest of a refused request lands here again).
  if (error.code === 'ECONNRESET' || socket.destroyed || socket.writableEnded) return;
  const pending = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || pending?.headersSent) {
    socket.destroy();
    return;
  }
  const known = CLIENT_ERRORS[error.code ?? ''] ?? { status: 400, message: 'The request is not valid HTTP/1.1' };
  answerAndClose(socket, known.status, { error: errorNameOf(known.status), message: known.message });
}

/**
 * Node hands `CONNECT` requests to a 'connect' listener and closes the socket when there is none:
 * answer them like any other route we do not have, with the error envelope.
 */
function answerConnectRequests(adapter: FastifyAdapter): void {
  adapter.getInstance().server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    answerAndClose(socket, 404, notFound(noRoute('CONNECT', request.url ?? '')));
  });
}
