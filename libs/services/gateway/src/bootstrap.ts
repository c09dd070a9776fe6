import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { LoggerService, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import { notFound } from '@cars/contracts';
import { ErrorEnvelopeFilter } from './http/error.filter';
import { applyStrictQuery } from './http/strict-query.interceptor';
import { createValidationPipe } from './http/validation.pipe';
import { instrumentGateway } from './metrics/gateway.metrics';
import { setUpOpenApi } from './openapi';

export interface GatewayHttpOptions {
  logger: LoggerService;
  /** Trust X-Forwarded-* from the ingress. */
  trustProxy?: boolean;
}

/** Creates the gateway's Fastify application around a root module (gateway app or standalone). */
export async function createGatewayApp(root: Type<unknown>, options: GatewayHttpOptions): Promise<NestFastifyApplication> {
  const adapter = new FastifyAdapter({
    trustProxy: options.trustProxy ?? false,
    bodyLimit: 64 * 1024,
    // Request logging is ours (no Authorization header ever reaches a log line).
    logger: false,
    routerOptions: { ignoreTrailingSlash: true },
  });
  const app = await NestFactory.create<NestFastifyApplication>(root, adapter, {
    logger: options.logger,
    bufferLogs: false,
    // JSON is the one body type; its parser is ours (below), so Nest registers none.
    bodyParser: false,
  });
  answerConnectRequests(adapter);
  acceptEmptyJsonBodies(adapter);
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

/**
 * `POST /webhooks/{id}/test` and the other routes without a body are often called with
 * `content-type: application/json` and nothing after it (HTTP clients set the header by default):
 * an empty JSON body is no body, not a 400. Anything else goes through Fastify's own parser
 * (prototype-poisoning protection included).
 */
function acceptEmptyJsonBodies(adapter: FastifyAdapter): void {
  const fastify = adapter.getInstance();
  const json = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, undefined);
    return json(request, String(body), done);
  });
}

/**
 * Node hands `CONNECT` requests to a 'connect' listener and closes the socket when there is none:
 * answer them like any other route we do not have, with the error envelope.
 */
function answerConnectRequests(adapter: FastifyAdapter): void {
  adapter.getInstance().server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    const body = JSON.stringify(notFound(`No route CONNECT ${(request.url ?? '').split('?')[0]}`));
    socket.end(
      'HTTP/1.1 404 Not Found\r\n' +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
}
