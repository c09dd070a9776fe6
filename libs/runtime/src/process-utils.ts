import { createServer } from 'node:net';

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

/** Runs `stop` once on the first SIGTERM or SIGINT (Kubernetes stop, Ctrl-C). */
export function onShutdownSignal(stop: () => Promise<void>): void {
  let stopping = false;
  const handler = () => {
    if (stopping) return;
    stopping = true;
    void stop();
  };
  process.once('SIGTERM', handler);
  process.once('SIGINT', handler);
}
