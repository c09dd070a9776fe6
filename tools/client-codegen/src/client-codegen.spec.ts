import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EVENT_CONTRACT, GENERATED_DIR, renderEventTypes, workspaceRoot } from './client-files';
import { buildOpenApiDocument, OpenApiDocument } from './openapi-document';

jest.setTimeout(60_000);

/**
 * The drift check: the client's committed generated sources must equal what the generator makes
 * now from the gateway's OpenAPI document and the event contract. A controller, DTO or event
 * change without `npx nx run client-codegen:generate` fails here.
 *
 * The document is built here, from the current sources; the rendering runs in the compiled tool
 * (`npm test` builds first), as openapi-typescript cannot be loaded by jest.
 */
describe('client code generation', () => {
  const root = workspaceRoot();
  const main = join(root, 'dist/tools/client-codegen/src/main.js');
  let document: OpenApiDocument;
  let dir: string;

  /** Runs the compiled generator's check against a document. */
  const check = (doc: OpenApiDocument) => {
    const file = join(dir, `openapi-${Date.now()}-${Math.random()}.json`);
    writeFileSync(file, JSON.stringify(doc));
    const run = spawnSync(process.execPath, [main, '--check', '--document', file], { cwd: root, encoding: 'utf8' });
    return { status: run.status, output: `${run.stdout}${run.stderr}` };
  };

  beforeAll(async () => {
    for (const name of ['main', 'client-files', 'openapi-types', 'openapi-document']) {
      const compiled = join(root, `dist/tools/client-codegen/src/${name}.js`);
      const fresh = existsSync(compiled) && statSync(compiled).mtimeMs >= statSync(join(__dirname, `${name}.ts`)).mtimeMs;
      if (!fresh) throw new Error(`${compiled} is missing or older than its source: run the specs with \`npm test\` (it builds first)`);
    }
    dir = mkdtempSync(join(tmpdir(), 'client-codegen-'));
    document = await buildOpenApiDocument();
  });

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("builds the gateway's document without any running service", () => {
    expect(document.openapi).toMatch(/^3\./);
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/makes', '/models', '/auctions', '/auctions/live', '/auctions/{auction_id}/bids', '/stats', '/webhooks', '/webhooks/{id}']),
    );
  });

  it('the committed client types are those of the current document and event contract', () => {
    const result = check(document);
    // On failure the output names the drifted files and the command that regenerates them.
    expect(result).toEqual({ status: 0, output: expect.stringContaining('client types up to date') });
  });

  it('notices a drift: a route that goes and a member renamed give other types', () => {
    const changed = structuredClone(document) as OpenApiDocument & { components: { schemas: Record<string, { properties: Record<string, unknown> }> } };
    delete changed.paths['/stats'];
    const schema = Object.values(changed.components.schemas).find((s) => s.properties?.median_price)!;
    schema.properties.median_price_usd = schema.properties.median_price;
    delete schema.properties.median_price;
    expect(check(changed)).toEqual({ status: 1, output: expect.stringContaining(`${GENERATED_DIR}/openapi.ts. Run \`npx nx run client-codegen:generate\``) });
  });

  it('takes the event types from the contract without its runtime helpers, and they compile alone', () => {
    const events = renderEventTypes(readFileSync(join(root, EVENT_CONTRACT), 'utf8'));
    expect(events).toContain('export interface EventEnvelope<T extends EventType = EventType>');
    expect(events).toContain('export type AnyEventEnvelope');
    expect(events).not.toMatch(/^import /m);
    expect(events).not.toContain('function ');
    expect(() => renderEventTypes(`import { x } from './x';\nexport const y = x;\n`)).toThrow(/do not compile alone/);
    expect(() => renderEventTypes(`export class Nope {}\n`)).toThrow(/ClassDeclaration/);
  });
});
