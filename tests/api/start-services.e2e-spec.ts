import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createDatabase, createVhost, deleteVhost, dropDatabase } from '@cars/testing';
import { request } from './support/http';
import { freePort, waitForOk } from './support/processes';

const START_SERVICES = join(__dirname, '../../dist/tools/scripts/src/start-services.js');

/**
 * `npm run start:services` supervises its apps like a process manager: one killed with SIGKILL
 * comes back by itself and the API answers again; SIGTERM stops everything cleanly, exit 0,
 * without an error line.
 */
describe('start:services', () => {
  const name = `${process.env.TEST_RUN_ID}_start_services`.toLowerCase();
  let supervisor: ChildProcess;
  let output = '';
  let gatewayUrl: string;

  const waitForOutput = async (pattern: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = output.match(pattern);
      if (match) return match;
      if (Date.now() > deadline) throw new Error(`no ${pattern} in:\n${output.slice(-3000)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const pidOf = async (app: string, after = 0): Promise<number> => {
    const pattern = new RegExp(`${app} started \\(pid (\\d+)\\)`, 'g');
    await waitForOutput(pattern);
    const pids = [...output.matchAll(pattern)].map((m) => Number(m[1]));
    if (pids.length <= after) {
      await waitForOutput(new RegExp(`(?:${app} started \\(pid \\d+\\)[\\s\\S]*){${after + 1}}`));
      return pidOf(app, after);
    }
    return pids[after];
  };
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };

  beforeAll(async () => {
    const port = await freePort();
    gatewayUrl = `http://127.0.0.1:${port}`;
    supervisor = spawn(process.execPath, [START_SERVICES, 'query', 'gateway'], {
      env: {
        ...process.env,
        DATABASE_URL: await createDatabase(name),
        RABBITMQ_URL: createVhost(name),
        PORT: String(port),
        HOST: '127.0.0.1',
        START_SERVICES_HEALTH_PORT_BASE: String(await freePort()),
        DATABASE_POOL_SIZE: '3',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    supervisor.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    supervisor.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await waitForOk(`${gatewayUrl}/health/ready`, 40_000);
  }, 60_000);

  afterAll(async () => {
    if (supervisor.exitCode === null) supervisor.kill('SIGKILL');
    deleteVhost(name);
    await dropDatabase(name);
  });

  it('restarts an app killed with SIGKILL, and the API answers again', async () => {
    // The deploy step loaded the reference catalog: /models answers from the start.
    expect((await request(`${gatewayUrl}/models?make=Porsche`)).status).toBe(200);
    const first = await pidOf('query');
    process.kill(first, 'SIGKILL');
    await waitForOutput(/query exited \(SIGKILL\); restarting in \d+ ms \(restart 1\)/);
    const second = await pidOf('query', 1);
    expect(second).not.toBe(first);
    const deadline = Date.now() + 20_000;
    let status = 0;
    while (status !== 200 && Date.now() < deadline) {
      status = (await request(`${gatewayUrl}/models?make=Porsche`)).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(status).toBe(200);
    expect(supervisor.exitCode).toBeNull();
  }, 40_000);

  it('stops every app on SIGTERM, exit 0, no error line', async () => {
    const pids = [await pidOf('query', 1), await pidOf('gateway')];
    const exited = new Promise<number | null>((resolve) => supervisor.once('exit', (code) => resolve(code)));
    supervisor.kill('SIGTERM');
    expect(await exited).toBe(0);
    for (const pid of pids) expect({ pid, alive: alive(pid) }).toEqual({ pid, alive: false });
    const lines = output.split('\n').filter((line) => line.trim() !== '');
    const errors = lines.filter((line) => /"level":"(error|fatal)"|Called end on pool|ECONNRESET|Unhandled/.test(line));
    expect(errors).toEqual([]);
    expect(output).toContain('start:services: stopped');
  }, 30_000);
});
