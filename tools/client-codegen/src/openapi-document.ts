import 'reflect-metadata';
import { readFile } from 'node:fs/promises';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MessagingModule } from '@cars/messaging';
import { DatabaseModule } from '@cars/persistence';
import { createGatewayApp, GatewayModule } from '@cars/service-gateway';

/** An OpenAPI 3 document as JSON (the generator reads only `paths` and `components`). */
export type OpenApiDocument = Record<string, unknown> & { openapi: string; paths: Record<string, unknown> };

const silentLogger = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };

/**
 * The gateway's `/openapi.json`, built by the gateway's own code (`createGatewayApp`: the same
 * module graph as `apps/gateway`, the same `setUpOpenApi`) without any running service: the app is
 * created in Nest's preview mode, which scans the modules and their decorators but instantiates
 * no provider, so no database, broker or Redis connection is ever opened. The URLs below are
 * never dialled.
 */
export async function buildOpenApiDocument(): Promise<OpenApiDocument> {
  @Module({
    imports: [
      DatabaseModule.forRoot({ url: 'postgres://openapi-document.invalid/unused' }),
      MessagingModule.forRoot({ transport: 'rmq', url: 'amqp://openapi-document.invalid', rpcTimeoutMs: 1 }),
      GatewayModule,
    ],
  })
  class DocumentRoot {}

  // createGatewayApp calls NestFactory.create; preview mode is switched on for that one call.
  const create = NestFactory.create.bind(NestFactory);
  const previewCreate: typeof NestFactory.create = (module: unknown, adapter: unknown, options?: object) =>
    create(module as never, adapter as never, { ...(options ?? {}), preview: true });
  NestFactory.create = previewCreate;
  let app: Awaited<ReturnType<typeof createGatewayApp>>;
  try {
    app = await createGatewayApp(DocumentRoot, { logger: silentLogger });
  } finally {
    NestFactory.create = create;
  }
  try {
    await app.init();
    const response = await app.getHttpAdapter().getInstance().inject({ method: 'GET', url: '/openapi.json' });
    if (response.statusCode !== 200) throw new Error(`/openapi.json answered ${response.statusCode} in preview mode`);
    return JSON.parse(response.body) as OpenApiDocument;
  } finally {
    await app.close();
  }
}

/** The document from a running gateway (`http(s)://…/openapi.json`) or a file. */
export async function readOpenApiDocument(source: string): Promise<OpenApiDocument> {
  if (/^https?:\/\//.test(source)) {
    const response = await fetch(source);
    if (!response.ok) throw new Error(`${source} answered ${response.status}`);
    return (await response.json()) as OpenApiDocument;
  }
  return JSON.parse(await readFile(source, 'utf8')) as OpenApiDocument;
}
