import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

export const API_TITLE = 'Classic Car Auction Data API';
export const API_VERSION = '1.0.0';

/** The OpenAPI document at /openapi.json and Swagger UI at /docs. */
export function setUpOpenApi(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle(API_TITLE)
    .setDescription(
      'Completed and live classic and collector car auctions from seven platforms: search, live auctions, ' +
        'bid history, pricing statistics, make and model lists, and signed webhooks.',
    )
    .setVersion(API_VERSION)
    .addBearerAuth({
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'opaque API key (cca_live_…)',
      description: 'Authorization: Bearer <API_KEY>, e.g. `Bearer cca_live_…` — an opaque key, not a JWT.',
    })
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
