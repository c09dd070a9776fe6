import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'amqplib';
import { Queues } from '@cars/contracts';
import { createVhost, deleteVhost } from '@cars/testing';

/** `npm run ingest` as operators run it: the compiled CLI against a vhost of its own, or the quick start's endpoint. */
jest.setTimeout(60000);

const MAIN = join(__dirname, '../../../dist/tools/ingest/src/main.js');
let dir: string;
let vhost: string;
let url: string;

function run(args: string[], env: NodeJS.ProcessEnv, cwd = dir): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], { cwd, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

const lines = Array.from({ length: 25 }, (_, i) => JSON.stringify({ source: 'bringatrailer', source_auction_id: String(i), observed_at: '2026-11-21T12:00:00Z', bids: [] }));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ingest-'));
  vhost = `${process.env.TEST_RUN_ID}_ingest`;
  url = createVhost(vhost);
  writeFileSync(join(dir, 'obs.ndjson'), `${lines.slice(0, 10).join('\n')}\n\n${lines.slice(10).join('\n')}`);
});

afterAll(() => {
  deleteVhost(vhost);
  rmSync(dir, { recursive: true, force: true });
});

async function drain(): Promise<string[]> {
  const connection = await connect(url);
  const channel = await connection.createChannel();
  const bodies: string[] = [];
  for (;;) {
    const message = await channel.get(Queues.Observations, { noAck: true });
    if (!message) break;
    bodies.push(message.content.toString());
  }
  await connection.close();
  return bodies;
}

it('publishes every line to the observations queue with confirms, progress on stderr', async () => {
  const result = await run([join(dir, 'obs.ndjson')], { RABBITMQ_URL: url });
  expect(result.code).toBe(0);
  expect(JSON.parse(result.stdout)).toMatchObject({ published: 25, skipped_blank: 1 });
  expect(result.stderr).toMatch(/ingest \[#+\] 25\/25 \(100%\) [\d,]+ obs\/s ETA 0:00/);
  expect(await drain()).toEqual(lines);
});

it('--rate limits the publishing rate', async () => {
  const result = await run([join(dir, 'obs.ndjson'), '--rate', '50'], { RABBITMQ_URL: url });
  expect(result.code).toBe(0);
  expect(result.ms).toBeGreaterThanOrEqual(450);
  expect(await drain()).toHaveLength(25);
});

it('fails with a message and a non-zero exit', async () => {
  const missing = await run([join(dir, 'nope.ndjson')], { RABBITMQ_URL: url });
  expect(missing.code).toBe(1);
  expect(missing.stderr).toMatch(/ingest: .*no such file/i);
  const usage = await run(['--rate', 'fast', 'x'], { RABBITMQ_URL: url });
  expect(usage.code).toBe(2);
  const broker = await run([join(dir, 'obs.ndjson')], { RABBITMQ_URL: 'amqp://guest:guest@127.0.0.1:1' });
  expect(broker.code).toBe(1);
  const nothing = await run([join(dir, 'obs.ndjson')], {});
  expect(nothing.code).toBe(1);
  expect(nothing.stderr).toMatch(/RABBITMQ_URL.*npm start/);
});

describe('without RABBITMQ_URL: the quick-start instance', () => {
  let server: Server;
  const received: string[] = [];
  let status = 200;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const got = body.split('\n').filter((l) => l !== '');
        received.push(...got);
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ accepted: got.length, rejected: [] }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    mkdirSync(join(dir, '.data'), { recursive: true });
    writeFileSync(
      join(dir, '.data', 'instance.json'),
      JSON.stringify({ pid: process.pid, databaseUrl: 'postgres://x', baseUrl: 'http://x', ingestUrl: `http://127.0.0.1:${port}/ingest` }),
    );
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('POSTs the lines as NDJSON to its loopback ingestion endpoint', async () => {
    const result = await run([join(dir, 'obs.ndjson')], {});
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ sent: 25, accepted: 25, rejected: 0 });
    expect(received).toEqual(lines);
  });

  it('exits non-zero when the endpoint refuses', async () => {
    status = 503;
    const result = await run([join(dir, 'obs.ndjson')], {});
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/answered 503/);
  });
});
