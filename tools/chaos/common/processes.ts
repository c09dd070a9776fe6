/**
 * The apps as the fault drills run them: each compiled app (dist/apps/<name>/src/main.js) as its
 * own process, its readiness polled on `/health/ready`, and its stop observed (code, signal, time).
 */
import { ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, sleep } from './infra';

export type AppName = 'gateway' | 'query' | 'stats' | 'webhooks' | 'change-detector' | 'delivery-worker';

/**
 * Starts one app with `env` on top of this process's environment. Its stdout and stderr go to
 * `logFile` (appended) when given; otherwise stdout is dropped and stderr shared with the drill.
 */
export function spawnApp(app: AppName, env: Record<string, string>, logFile?: string): ChildProcess {
  const fd = logFile ? openSync(logFile, 'a') : null;
  try {
    return spawn(process.execPath, [join(ROOT, 'dist', 'apps', app, 'src', 'main.js')], {
      env: { ...process.env, ...env },
      stdio: fd === null ? ['ignore', 'ignore', 'inherit'] : ['ignore', fd, fd],
    });
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

export function isRunning(child: ChildProcess | null | undefined): boolean {
  return !!child && child.exitCode === null && child.signalCode === null;
}

/** GET `url` → status, or null when it does not answer within `timeoutMs`. */
export async function statusOf(url: string, timeoutMs = 2000): Promise<number | null> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return null;
  }
}

/** Polls `url` until it answers 200; false after `timeoutMs` or when `child` exits first. */
export async function waitForReady(url: string, child: ChildProcess, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isRunning(child)) return false;
    if ((await statusOf(url)) === 200) return true;
    await sleep(100);
  }
  return false;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  ms: number;
  /** It outlived `timeoutMs` and was killed with SIGKILL. */
  forced: boolean;
}

/** Sends `signal` and waits for the exit; after `timeoutMs` the process is killed with SIGKILL. */
export function stopProcess(child: ChildProcess, signal: NodeJS.Signals, timeoutMs: number): Promise<Exit> {
  const started = Date.now();
  if (!isRunning(child)) return Promise.resolve({ code: child.exitCode, signal: child.signalCode, ms: 0, forced: false });
  return new Promise<Exit>((resolve) => {
    let forced = false;
    const force = setTimeout(() => {
      forced = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('exit', (code, exitSignal) => {
      clearTimeout(force);
      resolve({ code, signal: exitSignal, ms: Date.now() - started, forced });
    });
    child.kill(signal);
  });
}
