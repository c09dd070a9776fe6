/**
 * Generates the typed client's sources (libs/client/src/generated/) from the gateway's OpenAPI
 * document and the webhook event contract:
 *
 *   npx nx run client-codegen:generate          # write them
 *   npx nx run client-codegen:check             # exit 1 when the committed files have drifted
 *   node dist/tools/client-codegen/src/main.js [--check] [--document <url or file>]
 *
 * Without --document the document is built from the gateway's modules in Nest's preview mode: no
 * database, broker or Redis needed. With it, the document of a running gateway
 * (`http://…/openapi.json`) or a saved file is used instead.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { driftedFiles, REGENERATE_COMMAND, workspaceRoot } from './client-files';
import { buildOpenApiDocument, readOpenApiDocument } from './openapi-document';
import { renderClientFiles } from './openapi-types';

async function main(argv: string[]): Promise<number> {
  const check = argv.includes('--check');
  const at = argv.indexOf('--document');
  const source = at >= 0 ? argv[at + 1] : undefined;
  if (at >= 0 && !source) {
    console.error('usage: main.js [--check] [--document <url or file>]');
    return 2;
  }
  const root = workspaceRoot();
  const document = source ? await readOpenApiDocument(source) : await buildOpenApiDocument();
  const files = await renderClientFiles(document, root);
  if (check) {
    const drifted = driftedFiles(files, root);
    if (drifted.length > 0) {
      console.error(`The client's generated types differ from ${source ?? "the gateway's OpenAPI document"}: ${drifted.join(', ')}. Run \`${REGENERATE_COMMAND}\`.`);
      return 1;
    }
    console.error(`client types up to date (${files.map((f) => f.path).join(', ')})`);
    return 0;
  }
  for (const file of files) {
    mkdirSync(dirname(join(root, file.path)), { recursive: true });
    writeFileSync(join(root, file.path), file.content);
  }
  console.error(`wrote ${files.map((f) => f.path).join(', ')}`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
