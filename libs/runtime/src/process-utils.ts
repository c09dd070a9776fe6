import { createServer } from 'node:net';
import { errorMessage } from '@cars/contracts';

/** A TCP port free on loopback right now (for tests, benchmarks and the embedded database). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** True when a process with this pid exists (signal 0 checks without signalling). */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The one way a process stops (Kubernetes stop, Ctrl-C): `stop` runs once on the first SIGTERM or
 * SIGINT and is expected to close every pool and connection once and exit 0. Nest's own signal
 * hooks stay off (they close the application a second time and re-raise the signal). A stop that
 * hangs past the deadline, or fails, or a second signal, ends the process with one clear line.
 */
export function onShutdownSignal(
  stop: () => Promise<void>,
  options: { name?: string; deadlineMs?: number } = {},
): void {
  const name = options.name ?? 'process';
  const deadlineMs = options.deadlineMs ?? 10_000;
  const line = (level: 'warn' | 'error', msg: string) =>
    process.stderr.write(`${JSON.stringify({ level, time: new Date().toISOString(), service: name, msg })}\n`);
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      line('warn', `${signal} again while stopping: exiting now`);
      process.exit(1);
    }
    stopping = true;
    setTimeout(() => {
      line('error', `did not stop within ${deadlineMs} ms of ${signal}; forcing exit`);
      process.exit(1);
    }, deadlineMs).unref();
    stop().catch((error: unknown) => {
      line('error', `stopping failed: ${errorMessage(error)}`);
      process.exit(1);
    });
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

/** Thrown by `Startup.step` once a stop has been asked for: the start ends there, quietly. */
export class StartupStopped extends Error {
  constructor() {
    super('stopped while starting');
    this.name = 'StartupStopped';
  }
}

/**
 * A start that a stop may interrupt (Ctrl-C during the quick start's first start): each step of
 * the start runs through `step`, and what a step opens is handed to `onStop` inside it. A stop
 * waits for the step in progress, lets no further step begin, and closes what was opened in the
 * reverse order — listeners and consumers before the pools, the pools before the database.
 */
export class Startup {
  private readonly closers: (() => Promise<void>)[] = [];
  private current: Promise<unknown> = Promise.resolve();
  private stopping = false;

  /** Runs one step of the start; throws StartupStopped instead when a stop came first or meanwhile. */
  async step<T>(work: () => Promise<T>): Promise<T> {
    if (this.stopping) throw new StartupStopped();
    const running = work();
    this.current = running;
    const value = await running;
    if (this.stopping) throw new StartupStopped();
    return value;
  }

  /** Something to close at the stop: after whatever is registered later, before whatever came earlier. */
  onStop(close: () => Promise<void>): void {
    this.closers.push(close);
  }

  get stopped(): boolean {
    return this.stopping;
  }

  /** Waits for the step in progress, then closes everything registered, last first. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.current.catch(() => undefined);
    while (this.closers.length > 0) await this.closers.pop()!();
  }
}
