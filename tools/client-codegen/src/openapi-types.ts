import { readFileSync } from 'node:fs';
import { join } from 'node:path';
// openapi-typescript's CommonJS build requires ESM-only packages: fine for Node ≥ 20.19 (this
// tool), not loadable in jest — specs run the compiled tool instead.
import openapiTS, { astToString } from 'openapi-typescript';
import { EVENT_CONTRACT, GENERATED_DIR, GeneratedFile, header, renderEventTypes, workspaceRoot } from './client-files';
import type { OpenApiDocument } from './openapi-document';

/** Every generated file of the client, rendered from the document and the event contract. */
export async function renderClientFiles(document: OpenApiDocument, root: string = workspaceRoot()): Promise<GeneratedFile[]> {
  return [
    { path: `${GENERATED_DIR}/openapi.ts`, content: await renderOpenApiTypes(document) },
    { path: `${GENERATED_DIR}/events.ts`, content: renderEventTypes(readFileSync(join(root, EVENT_CONTRACT), 'utf8')) },
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
