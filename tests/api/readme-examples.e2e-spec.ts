import { execFileSync, spawn, ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createDatabase, dropDatabase } from '@cars/testing';
import { freePort } from './support/processes';

const ROOT = join(__dirname, '../..');
const STANDALONE = join(ROOT, 'dist/apps/standalone/src/main.js');

/** The README's shell commands that talk to the API: every `curl`, and the `ID=$(…)` they use. */
export function readmeCommands(readme: string): string[] {
  const commands: string[] = [];
  for (const block of readme.matchAll(/```bash\n([\s\S]*?)```/g)) {
    const lines = block[1].replace(/\\\n\s*/g, '').split('\n');
    for (const line of lines) if (/^(curl |ID=\$\(curl )/.test(line.trim())) commands.push(line.trim());
  }
  return commands;
}

/**
 * Every curl of the README, copied as it stands, answers with data against the quick start's own
 * demo data (the same data set `npm start` loads): no example that returns an empty list, a
 * stale date or an error message the API no longer sends.
 */
describe('README examples against the quick start', () => {
  const name = `${process.env.TEST_RUN_ID}_readme`.toLowerCase();
  let child: ChildProcess;
  let output = '';
  let base: string;
  let key: string;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const { RABBITMQ_URL: _broker, REDIS_URL: _redis, ...env } = process.env;
    child = spawn(process.execPath, [STANDALONE], {
      env: { ...env, DATABASE_URL: await createDatabase(name), PORT: String(port), HOST: '127.0.0.1', LOAD_DEMO_DATA: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 240_000;
    while (!output.includes('Demo data set loaded')) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`quick start not loaded:\n${output.slice(-3000)}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    key = /10K\s+(cca_live_\w+)/.exec(output)![1];
  }, 260_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await dropDatabase(name);
  });

  it('answers every curl with data', () => {
    const commands = readmeCommands(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    expect(commands.length).toBeGreaterThanOrEqual(9);
    const assignments: string[] = [];
    const results: { command: string; outcome: string }[] = [];
    for (const original of commands) {
      const command = original.replaceAll('http://127.0.0.1:3000', base).replaceAll('<API_KEY>', key);
      if (command.startsWith('ID=')) {
        assignments.push(command);
        continue;
      }
      const script = ['set -euo pipefail', `KEY=${key}`, ...assignments, command.replace(/^curl /, 'curl -sS ')].join('\n');
      const stdout = execFileSync('bash', ['-c', script], { encoding: 'utf8', timeout: 30_000 });
      const body = JSON.parse(stdout) as { data?: unknown; total_sales?: number; name?: string; error?: string; details?: Record<string, string[]> };
      const outcome =
        body.error !== undefined
          ? `error ${body.error}: ${JSON.stringify(body.details)}`
          : Array.isArray(body.data)
            ? body.data.length > 0
              ? 'data'
              : 'EMPTY'
            : (body.total_sales ?? 0) > 0 || body.name
              ? 'data'
              : 'EMPTY';
      results.push({ command: original, outcome });
    }
    const expected = results.map(({ command }) => ({
      command,
      // The README's error example is meant to fail, with the message it quotes.
      outcome: command.includes('limit=1000')
        ? `error Validation Error: ${JSON.stringify({ limit: ['limit must be an integer from 1 to 100'] })}`
        : 'data',
    }));
    expect(results).toEqual(expected);
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('"details":{"limit":["limit must be an integer from 1 to 100"]}');
  }, 120_000);
});
