import { ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { processIsAlive } from '@cars/runtime';
import { freePort } from './support/processes';

const STANDALONE = join(__dirname, '../../dist/apps/standalone/src/main.js');

/** Lines that must never appear when the quick start stops on Ctrl-C. */
const BAD_LINE = /"level":"(error|fatal)"|Error:|^\s+at |node:events|Unhandled|terminating connection|Called end on pool/;

/** The quick start embeds its database and carries messages in-process when these are unset. */
function withoutServers(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { DATABASE_URL: _database, RABBITMQ_URL: _broker, REDIS_URL: _redis, ...rest } = env;
  return rest;
}

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: string | null }>;
}

/**
 * Ctrl-C in the terminal of `npm start`, at ten moments from the first start to a loaded instance:
 * the signal goes to the whole foreground process group (the test starts the quick start in a
 * group of its own and signals the group), as a terminal does. Each time the process exits 0 with
 * no error line and no stack, leaves no database server behind, and the next start reuses the same
 * `.data/` directory: it starts and answers /health/ready.
 */
describe('quick start: Ctrl-C at any moment of the first start and the demo load', () => {
  const dir = mkdtempSync(join(tmpdir(), 'quick-start-ctrl-c-'));
  const pidFile = join(dir, '.data', 'pg', 'postmaster.pid');
  const started: ChildProcess[] = [];
  let dbPort: number;
  let port: number;

  beforeAll(async () => {
    // Run as root, the embedded server runs as the `postgres` user: it must reach the directory.
    chmodSync(dir, 0o755);
    dbPort = await freePort();
    port = await freePort();
  });

  afterAll(() => {
    // Every process this spec started, even when it failed: the app's process group, then the
    // database server (a session of its own) if one is left.
    for (const child of started) {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
    }
    const server = postmasterPid();
    if (server !== null && processIsAlive(server)) process.kill(server, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  function postmasterPid(): number | null {
    if (!existsSync(pidFile)) return null;
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    return pid > 0 ? pid : null;
  }

  function start(): Run {
    const child = spawn(process.execPath, [STANDALONE], {
      cwd: dir,
      env: { ...withoutServers(process.env), PORT: String(port), HOST: '127.0.0.1', EMBEDDED_DATABASE_PORT: String(dbPort), LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // a process group of its own, as a terminal's foreground job
    });
    started.push(child);
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    return { child, output: () => output, exited };
  }

  async function until(run: Run, what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (run.child.exitCode !== null || Date.now() > deadline) throw new Error(`${what}: not reached\n${run.output().slice(-3000)}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  const logged = (run: Run, pattern: RegExp) => () => pattern.test(run.output());
  /** The demo load's progress: the highest count logged. */
  const loaded = (run: Run, atLeast: number) => () =>
    Math.max(0, ...[...run.output().matchAll(/"observations":(\d+)/g)].map((m) => Number(m[1]))) >= atLeast;
  /** Migrations under way: some applied, as the embedded database itself tells (a connection per look). */
  const migrating = async () => {
    const client = new Client({ connectionString: `postgres://postgres:quickstart@127.0.0.1:${dbPort}/cars` });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM schema_migrations`);
      return rows[0].n > 0;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  const ready = async () => {
    const res = await fetch(`http://127.0.0.1:${port}/health/ready`).catch(() => null);
    return res?.status === 200;
  };

  /** Ctrl-C: SIGINT to the process group. Returns the exit, its lines, and how long the stop took. */
  async function ctrlC(run: Run): Promise<{ code: number | null; signal: string | null; bad: string[]; stopMs: number }> {
    const at = Date.now();
    process.kill(-run.child.pid!, 'SIGINT');
    const exit = await run.exited;
    const bad = run.output().split('\n').filter((line) => BAD_LINE.test(line));
    return { ...exit, bad, stopMs: Date.now() - at };
  }

  const moments: { name: string; wait: (run: Run) => () => boolean | Promise<boolean>; listening: boolean }[] = [
    { name: 'first start, creating the database (initdb)', wait: (run) => logged(run, /Creating the embedded database/), listening: false },
    { name: 'migrations under way', wait: () => migrating, listening: false },
    { name: 'modules initialising', wait: (run) => logged(run, /SMTP_URL is not set/), listening: false },
    { name: 'application started, before it listens', wait: (run) => logged(run, /Nest application successfully started/), listening: false },
    { name: 'demo load starting', wait: (run) => logged(run, /Loading the demo data set/), listening: true },
    { name: 'demo load at 10,000 observations', wait: (run) => loaded(run, 10_000), listening: true },
    { name: 'demo load at 40,000 observations', wait: (run) => loaded(run, 40_000), listening: true },
    { name: 'demo load at 80,000 observations', wait: (run) => loaded(run, 80_000), listening: true },
    { name: 'demo load just completed', wait: (run) => logged(run, /Demo data set loaded/), listening: true },
    { name: 'loaded instance, idle', wait: (run) => logged(run, /Classic Car Auction Data API is up/), listening: true },
  ];

  it('exits 0 without an error line each time, and the next start reuses .data/', async () => {
    const results: string[] = [];
    for (const moment of moments) {
      const run = start();
      await until(run, moment.name, moment.wait(run));
      if (moment.listening) expect({ moment: moment.name, ready: await ready() }).toEqual({ moment: moment.name, ready: true });
      const stop = await ctrlC(run);
      results.push(`${moment.name}: stopped in ${stop.stopMs} ms`);
      expect({ moment: moment.name, code: stop.code, signal: stop.signal, bad: stop.bad }).toEqual({ moment: moment.name, code: 0, signal: null, bad: [] });
      expect(stop.stopMs).toBeLessThan(30_000);
      // The database server stopped with the app (it is in a session of its own: nothing else stops it).
      const server = postmasterPid();
      expect({ moment: moment.name, serverLeft: server !== null && processIsAlive(server) }).toEqual({ moment: moment.name, serverLeft: false });
    }
    // One more start on the same directory: up, ready, and it stops cleanly too.
    const last = start();
    await until(last, 'ready after the ten stops', ready);
    expect(last.output()).not.toContain('Loading the demo data set');
    const stop = await ctrlC(last);
    expect({ code: stop.code, signal: stop.signal, bad: stop.bad }).toEqual({ code: 0, signal: null, bad: [] });
    process.stdout.write(`${results.join('\n')}\n`);
  }, 420_000);
});
