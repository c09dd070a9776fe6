import { ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './support/processes';

const STANDALONE = join(__dirname, '../../dist/apps/standalone/src/main.js');

/** Lines that must never appear when a process stops on a signal. */
const BAD_LINE = /"level":"(error|fatal)"|Called end on pool|ECONNRESET|node:events|Unhandled|pool raised an error|terminating connection/;

/**
 * The quick start (`npm start`: embedded PostgreSQL, in-process broker) stops cleanly on Ctrl-C
 * (SIGINT), both while the demo data set is still loading and once it runs: exit 0, every pool
 * closed once, no error line.
 */
/** The quick start embeds its database and carries messages in-process when these are unset. */
function withoutServers(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { DATABASE_URL: _database, RABBITMQ_URL: _broker, REDIS_URL: _redis, ...rest } = env;
  return rest;
}

describe('quick start stops cleanly on SIGINT', () => {
  const dir = mkdtempSync(join(tmpdir(), 'quick-start-stop-'));
  let dbPort: number;

  beforeAll(async () => {
    // Run as root, the embedded server runs as the `postgres` user: it must reach the directory.
    chmodSync(dir, 0o755);
    dbPort = await freePort();
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function runUntil(loadDemoData: boolean, ready: RegExp): Promise<{ code: number | null; signal: string | null; output: string; stopMs: number }> {
    const child: ChildProcess = spawn(process.execPath, [STANDALONE], {
      cwd: dir,
      env: {
        ...withoutServers(process.env),
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
        EMBEDDED_DATABASE_PORT: String(dbPort),
        LOAD_DEMO_DATA: String(loadDemoData),
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const deadline = Date.now() + 90_000;
    while (!ready.test(output)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`not ready:\n${output.slice(-3000)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const stopped = Date.now();
    child.kill('SIGINT');
    const result = await exited;
    return { ...result, output, stopMs: Date.now() - stopped };
  }

  it('while the demo data set is loading', async () => {
    const run = await runUntil(true, /"msg":"loading the demo data set"/);
    expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
    expect(run.output.split('\n').filter((line) => BAD_LINE.test(line))).toEqual([]);
    expect(run.output).toContain('loading the demo data set stopped; it goes on at the next start');
    expect(run.output).toContain('Loading the demo data set (121,500 auctions: 120,000 completed, 1,500 live) in the background');
    // Progress as the ingest CLI shows it: done of total, percentage, rate and time left.
    const progress = JSON.parse(run.output.split('\n').find((line) => line.includes('"msg":"loading the demo data set"'))!) as Record<string, unknown>;
    expect(progress).toMatchObject({ total: 121_500, observations: expect.any(Number), percent: expect.any(Number), eta_seconds: expect.any(Number) });
    expect(progress.progress).toMatch(/^demo data \[[#-]{24}\] [\d,]+\/121,500 \(\d+%\) [\d,]+ obs\/s ETA \d+:\d\d$/);
    expect(run.stopMs).toBeLessThan(30_000);
  }, 120_000);

  it('once it is up', async () => {
    const run = await runUntil(false, /Classic Car Auction Data API is up at/);
    expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
    expect(run.output.split('\n').filter((line) => BAD_LINE.test(line))).toEqual([]);
  }, 120_000);
});
