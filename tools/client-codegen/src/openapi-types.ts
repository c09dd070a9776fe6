import { readFileSync } from 'node:fs';
import { join } from 'node:path';
// openapi-typescript's CommonJS build requires ESM-only packages: fine for Node ≥ 20.19 (this
// tool), not loadable in jest — specs run the compiled tool instead.
import openapiTS, { astToString } from 'openapi-typescript';
import { EVENT_CONTRACT, GENERATED_DIR, GeneratedFile, header, renderEventTypes, workspaceRoot } from './client-files';
import { EVENT_SAMPLES } from '@cars/contracts';
import { EVENT_CATALOG, EVENT_SCHEMA_FILE, renderEventCatalog, renderEventSchema, renderEventSchemaFile } from './event-schema';
import type { OpenApiDocument } from './openapi-document';

/** Every generated file of the client, rendered from the document and the event contract. */
export async function renderClientFiles(document: OpenApiDocument, root: string = workspaceRoot()): Promise<GeneratedFile[]> {
  return [
    { path: `${GENERATED_DIR}/openapi.ts`, content: await renderOpenApiTypes(document) },
    { path: `${GENERATED_DIR}/events.ts`, content: renderEventTypes(readFileSync(join(root, EVENT_CONTRACT), 'utf8')) },
    ...renderEventCatalogFiles(root),
  ];
}

/** The events' JSON Schema (served by the gateway) and the catalog's generated part, from the contract and its samples. */
export function renderEventCatalogFiles(root: string = workspaceRoot()): GeneratedFile[] {
  const schema = renderEventSchema(readFileSync(join(root, EVENT_CONTRACT), 'utf8'), EVENT_SAMPLES);
  return [
    { path: EVENT_SCHEMA_FILE, content: renderEventSchemaFile(schema, header(EVENT_CONTRACT).trimEnd()) },
    { path: EVENT_CATALOG, content: renderEventCatalog(readFileSync(join(root, EVENT_CATALOG), 'utf8'), schema) },
  ];
}

/**
 * `paths`, `operations` and `components` of the document as TypeScript types (openapi-typescript).
 * Members with a default stay optional (`defaultNonNullable: false`): a request may leave them out.
 */
export async function renderOpenApiTypes(document: OpenApiDocument): Promise<string> {
  const ast = await openapiTS(document as never, { defaultNonNullable: false, alphabetize: false });
  return `${header("the gateway's OpenAPI document (/openapi.json) with openapi-typescript")}\n${astToString(ast)}`;
}
