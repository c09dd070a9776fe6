import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createDataSource } from '@cars/persistence';
import { NormalizationService, ObservationProcessor, ingestObservationLines } from '@cars/service-change-detector';
import { createIsolatedDatabase } from '@cars/testing';
import { DataSource } from 'typeorm';

/**
 * Two generated data sets of different seeds, ingested one after the other into one database the
 * way a quick-start user does (`npm run datagen`, then `npm run ingest` to the loopback endpoint):
 * the second adds its auctions and changes none of the first's; ingesting a file again is refused
 * unless --allow-rewrite.
 */
jest.setTimeout(120000);

const DIST = join(__dirname, '../../../dist/tools');
let dir: string;
let database: { url: string; drop: () => Promise<void> };
let dataSource: DataSource;
let server: Server;

function run(script: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(DIST, script), ...args], { cwd: dir, env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Every auction row with a digest of all its columns: any change to any auction shows. */
async function snapshot(): Promise<Map<string, string>> {
  const rows: { key: string; digest: string }[] = await dataSource.query(
    `SELECT a.source || '/' || a.source_auction_id AS key, md5(a::text) AS digest FROM auctions a`,
  );
  return new Map(rows.map((r) => [r.key, r.digest]));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ingest-two-'));
  database = await createIsolatedDatabase('ingest_two');
  dataSource = await createDataSource({ url: database.url, poolSize: 4 }).initialize();
  await new NormalizationService(dataSource).loadReference();
  const processor = new ObservationProcessor(dataSource);
  // The quick start's loopback ingestion endpoint, over this run's database.
  server = createServer((req, res) => {
    ingestObservationLines(processor, createInterface({ input: req, crlfDelay: Infinity })).then(
      (result) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result)),
      (error: unknown) => res.writeHead(500).end(String(error)),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  mkdirSync(join(dir, '.data'), { recursive: true });
  writeFileSync(
    join(dir, '.data', 'instance.json'),
    JSON.stringify({ pid: process.pid, databaseUrl: database.url, baseUrl: 'http://127.0.0.1:1', ingestUrl: `http://127.0.0.1:${port}/ingest` }),
  );
});

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await dataSource?.destroy();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

it('adds a second seed to the first without changing any of its auctions, and refuses to rewrite unasked', async () => {
  const first = await run('datagen/src/main.js', ['--auctions', '240', '--live', '60', '--today', '2026-11-20', '--out', 'demo.ndjson']);
  expect(first.code).toBe(0);
  expect(first.stderr).toContain('demo.ndjson holds 300 auctions (240 completed, 60 live)');
  expect(first.stderr).toMatch(/[\d,]+ bids, 300 lines/);
  const second = await run('datagen/src/main.js', ['--auctions', '240', '--seed', '4242', '--today', '2026-11-20', '--out', 'second.ndjson']);
  expect(second.code).toBe(0);
  expect(second.stderr).toContain('ids in namespace "s4242"');
  expect(second.stderr).toContain('second.ndjson holds 1,740 auctions (240 completed, 1,500 live)');

  const a = await run('ingest/src/main.js', ['demo.ndjson']);
  expect(a.code).toBe(0);
  expect(a.stderr).toContain('demo.ndjson holds 300 lines: 300 auctions (240 completed, 60 live)');
  expect(JSON.parse(a.stdout)).toMatchObject({ sent: 300, rejected: 0, file: { lines: 300, existing_auctions: 0 } });
  const afterFirst = await snapshot();
  expect(afterFirst.size).toBe(300);

  const b = await run('ingest/src/main.js', ['second.ndjson']);
  expect(b.code).toBe(0);
  expect(JSON.parse(b.stdout)).toMatchObject({ sent: 1740, rejected: 0, file: { existing_auctions: 0 } });
  const afterSecond = await snapshot();
  expect(afterSecond.size).toBe(300 + 1740);
  for (const [key, digest] of afterFirst) expect([key, afterSecond.get(key)]).toEqual([key, digest]);

  // The same file again would rewrite every one of its auctions: refused, nothing sent.
  const again = await run('ingest/src/main.js', ['demo.ndjson']);
  expect(again.code).toBe(4);
  expect(again.stderr).toMatch(/NOT SENT: 300 of its 300 auctions already exist \(e\.g\. [a-z]+\/\S+/);
  expect(again.stderr).toContain('--allow-rewrite');
  expect(again.stdout).toBe('');
  expect(await snapshot()).toEqual(afterSecond);

  const allowed = await run('ingest/src/main.js', ['demo.ndjson', '--allow-rewrite']);
  expect(allowed.code).toBe(0);
  expect(allowed.stderr).toMatch(/WARNING: 300 of its 300 auctions already exist/);
  expect(JSON.parse(allowed.stdout)).toMatchObject({ sent: 300, file: { existing_auctions: 300 } });
});
