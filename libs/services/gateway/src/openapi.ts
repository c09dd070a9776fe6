import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { AccountAreaEnv, loadEnv } from '@cars/runtime';
import { SESSION_COOKIE } from './account/session-cookie';
import { EVENT_SCHEMA_PATH } from './schemas/event-schema.controller';

export const API_TITLE = 'Classic Car Auction Data API';
export const API_VERSION = '1.0.0';

/**
 * Where the API is served, for the document's `servers`: `PUBLIC_BASE_URL` when set (the public
 * origin, as in account-area mail), else `/` — the origin the document itself was fetched from.
 */
export function openApiServerUrl(env: NodeJS.ProcessEnv = process.env): string {
  return loadEnv(AccountAreaEnv, env).PUBLIC_BASE_URL ?? '/';
}

/** The OpenAPI document at /openapi.json and Swagger UI at /docs. */
export function setUpOpenApi(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle(API_TITLE)
    .setDescription(
      'Completed and live classic and collector car auctions from seven platforms: search, live auctions, ' +
        'bid history, pricing statistics, make and model lists, and signed webhooks. The `/account` routes are the ' +
        'account area (the console at `/console`): email and password sign-in with a session cookie, for browsers and scripts.',
    )
    .setVersion(API_VERSION)
    .addServer(openApiServerUrl())
    // The webhook events are not HTTP routes of this API: their catalog is a JSON Schema of its own.
    .setExternalDoc('Webhook event catalog: the JSON Schema of every event type, with a sample of each (docs/api/events.md)', EVENT_SCHEMA_PATH)
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'opaque API key (cca_live_…)',
      description: 'Authorization: Bearer <API_KEY>, e.g. `Bearer cca_live_…` — an opaque key, not a JWT.',
    })
    .addCookieAuth(
      SESSION_COOKIE,
      {
        type: 'apiKey',
        in: 'cookie',
        description:
          'The console session of POST /account/signin or /account/signup (HttpOnly). Authorizes `/account/…` routes only, never ' +
          'the data API. State-changing requests also send the session\'s `csrf_token` as `X-CSRF-Token`.',
      },
      SESSION_COOKIE,
    )
    .build();
  const document = withoutUnusedSchemas(SwaggerModule.createDocument(app, config));
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'openapi.json', raw: ['json'] });
}

/** Drops component schemas nothing refers to (e.g. one the generator made of a framework type). */
export function withoutUnusedSchemas(document: OpenAPIObject): OpenAPIObject {
  const schemas = document.components?.schemas ?? {};
  const used = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== 'object') return;
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string' && inner.startsWith('#/components/schemas/')) {
        const name = inner.slice('#/components/schemas/'.length);
        if (!used.has(name)) {
          used.add(name);
          visit(schemas[name]);
        }
      } else {
        visit(inner);
      }
    }
  };
  visit(document.paths);
  for (const name of Object.keys(schemas)) if (!used.has(name)) delete schemas[name];
  return document;
}
