import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '@cars/runtime';

const STANDALONE = join(__dirname, '..', '..', '..', 'dist', 'apps', 'standalone', 'src', 'main.js');

export interface Standalone {
  base: string;
  output(): string;
  /** The verification links the app wrote to its log (no SMTP_URL), oldest first. */
  verificationLinks(email: string): string[];
  stop(): Promise<void>;
}

/**
 * The quick start (`npm start`) as a process of its own over the spec's database: gateway, services
 * and delivery worker in one, messages in-process, the verification link in the log.
 */
export async function startStandalone(databaseUrl: string, options: { allowPrivateDestinations?: boolean } = {}): Promise<Standalone> {
  const port = await freePort();
  const { RABBITMQ_URL: _broker, REDIS_URL: _redis, SMTP_URL: _smtp, ...env } = process.env;
  const child: ChildProcess = spawn(process.execPath, [STANDALONE], {
    env: {
      ...env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOAD_DEMO_DATA: 'false',
      // As the README's quick start for local receivers says: `WEBHOOK_ALLOW_PRIVATE_DESTINATIONS=true npm start`.
      WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: options.allowPrivateDestinations === false ? 'false' : 'true',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const base = `http://127.0.0.1:${port}`;
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.once('exit', () => {
        clearTimeout(force);
        resolve();
      });
      child.kill('SIGTERM');
    });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/health/ready`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the standalone app did not become ready:\n${output.slice(-3000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    base,
    output: () => output,
    verificationLinks: (email) =>
      [...output.matchAll(/Email verification for (\S+): open (\S+)/g)].filter((m) => m[1] === email).map((m) => m[2]!),
    stop,
  };
}
