import { join } from 'node:path';
import { Config, createConfig, lintFromString, loadConfig, NormalizedProblem } from '@redocly/openapi-core';
import { request } from './support/http';
import { startTestGateway } from './support/stack';

jest.setTimeout(60_000);

const ROOT = join(__dirname, '..', '..');

type Operation = { security?: Record<string, string[]>[] };
interface OpenApiDocument {
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
}

/** The routes that answer without an API key or a console session (everything else needs one). */
const NO_CREDENTIALS = [
  'get /',
  'get /health/live',
  'get /health/ready',
  'get /makes',
  'get /models',
  'post /account/signin',
  'post /account/signup',
  'post /account/verify-email',
  'get /schemas/events.json',
];

const lint = async (document: object, config: Config): Promise<string[]> =>
  (await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config })).map(problemLine);

const problemLine = (p: NormalizedProblem): string => `${p.severity} ${p.ruleId} at ${p.location.map((l) => l.pointer).join(', ')}: ${p.message}`;

/**
 * The served /openapi.json linted by Redocly with the repository's rules (redocly.yaml: the
 * `recommended` ruleset, warnings as errors, every example checked against its schema).
 */
describe('OpenAPI lint', () => {
  let gateway: Awaited<ReturnType<typeof startTestGateway>>;
  let doc: OpenApiDocument;
  let config: Config;

  beforeAll(async () => {
    gateway = await startTestGateway();
    const res = await request(`${gateway.url}/openapi.json`);
    expect(res.status).toBe(200);
    doc = res.body;
    config = await loadConfig({ configPath: join(ROOT, 'redocly.yaml') });
  });

  afterAll(async () => {
    await gateway?.gateway.close();
  });

  it('lints clean: no error, no warning', async () => {
    expect(await lint(doc, config)).toEqual([]);
  });

  it('names a server, and says of every operation which credentials it takes', () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ route: `${method} ${path}`, security: operation.security })),
    );
    expect(operations.filter((o) => o.security === undefined).map((o) => o.route)).toEqual([]);
    expect(operations.filter((o) => o.security?.length === 0).map((o) => o.route).sort()).toEqual([...NO_CREDENTIALS].sort());
  });

  it('answers the operations it documents as needing no credentials without any', async () => {
    for (const route of NO_CREDENTIALS.filter((r) => r.startsWith('get '))) {
      const path = route.slice('get '.length);
      const res = await fetch(`${gateway.url}${path}${path === '/models' ? '?make=Porsche' : ''}`);
      expect({ route, status: res.status }).not.toEqual({ route, status: 401 });
    }
  });

  it('fails a document with the faults these rules exist for', async () => {
    const broken = {
      openapi: '3.0.0',
      info: { title: 't', version: '1' },
      servers: [],
      paths: {
        '/secret': {
          get: {
            operationId: 'secret',
            summary: 's',
            responses: {
              '200': {
                description: 'ok',
                content: { 'application/json': { schema: { type: 'string', pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$', example: '<SIGNING_SECRET>' } } },
              },
              '400': { description: 'bad' },
            },
          },
        },
      },
    };
    const problems = await lint(broken, config);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^error no-empty-servers /),
        expect.stringMatching(/^error security-defined at #\/paths\/~1secret\/get/),
        expect.stringMatching(/^error no-invalid-schema-examples .*example/),
      ]),
    );
    // And the recommended ruleset alone would not have caught the example.
    const recommended = await createConfig({ extends: ['recommended'] });
    expect((await lint(broken, recommended)).filter((p) => p.includes('example'))).toEqual([]);
  });
});
