import { ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The repository root: the nearest folder up from here with nx.json (from the sources or from dist/). */
function repositoryRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'nx.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no repository root above ${__dirname}`);
    dir = parent;
  }
  return dir;
}

const ROOT = repositoryRoot();

export interface AppProcess {
  name: string;
  child: ChildProcess;
  /** Everything the process printed, for assertions and failure messages. */
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts one compiled app (`npm test` builds dist/ first) as its own process. */
export function startApp(name: string, env: Record<string, string>): AppProcess {
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'apps', name, 'src', 'main.js')], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return {
    name,
    child,
    output: () => output,
    stop: (signal: NodeJS.Signals = 'SIGTERM') =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const force = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', () => {
          clearTimeout(force);
          resolve();
        });
        child.kill(signal);
      }),
  };
}

/** Polls until `url` answers 200, or fails after `timeoutMs`. */
export async function waitForOk(url: string, timeoutMs = 20000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.status === 200) return;
      last = `${res.status} ${await res.text()}`;
    } catch (error) {
      last = String(error);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} not ready after ${timeoutMs} ms: ${last}`);
}
