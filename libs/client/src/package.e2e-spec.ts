import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The client as another project gets it: `npm run client:pack` builds the tarball, and a fresh
 * project installs it with npm (offline: its one dependency and that one's own are packed from
 * this workspace's node_modules, standing in for the registry), then imports it from JavaScript
 * and type-checks a TypeScript file against it.
 */
jest.setTimeout(180_000);

const ROOT = join(__dirname, '../../..');
const { version } = JSON.parse(readFileSync(join(ROOT, 'libs/client/package.json'), 'utf8')) as { version: string };
const TARBALL = join(ROOT, 'dist/packages', `classic-car-auctions-client-${version}.tgz`);
let project: string;

const run = (command: string, args: string[], cwd: string) =>
  execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } });

beforeAll(() => {
  rmSync(TARBALL, { force: true });
  run('npm', ['run', '--silent', 'client:pack'], ROOT);
  project = mkdtempSync(join(tmpdir(), 'client-consumer-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
});

afterAll(() => project && rmSync(project, { recursive: true, force: true }));

it('packs the built files, the README and a package.json whose main and types are in the tarball', () => {
  const files = run('tar', ['-tzf', TARBALL], ROOT).split('\n').filter(Boolean).map((f) => f.replace(/^package\//, ''));
  const manifest = JSON.parse(run('tar', ['-xzOf', TARBALL, 'package/package.json'], ROOT)) as Record<string, unknown>;
  expect(manifest).toMatchObject({ name: '@classic-car-auctions/client', version, main: './index.js', types: './index.d.ts' });
  expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'index.js', 'index.d.ts', 'cars-client.js', 'transport.d.ts', 'generated/openapi.d.ts']));
  expect(files.filter((f) => /\.spec\.|\.ts$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
  expect(run('tar', ['-xzOf', TARBALL, 'package/README.md'], ROOT)).toContain('npm install ./classic-car-auctions-client-');
});

it('installs into another project with npm and works from JavaScript and TypeScript', () => {
  const dependencies = Object.keys((JSON.parse(readFileSync(join(ROOT, 'libs/client/package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies);
  const stand_ins = [...dependencies, '@stablelib/base64', 'fast-sha256'];
  for (const name of stand_ins) run('npm', ['pack', '--silent', '--ignore-scripts', join(ROOT, 'node_modules', name), '--pack-destination', project], project);
  const local = run('ls', [project], project).split('\n').filter((f) => f.endsWith('.tgz')).map((f) => `./${f}`);
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', ...local, TARBALL], project);

  const script = `
    const { CarsClient, ConflictError, verifyWebhook, SUBSCRIBABLE_EVENT_TYPES } = require('@classic-car-auctions/client');
    const cars = new CarsClient({ baseUrl: 'http://127.0.0.1:1', fetch: async () => ({ status: 409, headers: { get: (h) => (h === 'retry-after' ? '1' : null) }, text: async () => '{"error":"Conflict","message":"in flight"}' }), sleep: async () => {}, maxConflictWaitMs: 2000 });
    cars.webhooks.delete('whe_1').catch((e) => console.log(JSON.stringify({ conflict: e instanceof ConflictError, verify: typeof verifyWebhook, events: SUBSCRIBABLE_EVENT_TYPES.length })));`;
  expect(JSON.parse(run(process.execPath, ['-e', script], project))).toEqual({ conflict: true, verify: 'function', events: expect.any(Number) });

  writeFileSync(
    join(project, 'consumer.ts'),
    `import { CarsClient, type Auction } from '@classic-car-auctions/client';
     const cars = new CarsClient({ baseUrl: 'https://api.example.com', apiKey: 'k' });
     export async function prices(): Promise<(number | null)[]> {
       const page = await cars.auctions.search({ make: 'Porsche', limit: 5 });
       return page.data.map((a: Auction) => a.price);
     }
     // @ts-expect-error: the types reject an unknown sort
     void cars.auctions.search({ sort: 'colour' });`,
  );
  run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit', '--strict', '--module', 'commonjs', '--moduleResolution', 'node', '--target', 'ES2022', '--lib', 'ES2022,DOM', 'consumer.ts'], project);
});
