import { spawn } from 'node:child_process';
import { join } from 'node:path';

const COMPILED = join(__dirname, '../../../dist/libs/runtime/src/process-utils.js');

/** A process that uses onShutdownSignal with a stop of the given kind, signalled once it is ready. */
function runWithStop(stop: 'clean' | 'hangs' | 'fails'): Promise<{ code: number | null; stderr: string }> {
  const body = {
    clean: 'async () => { process.exit(0); }',
    hangs: '() => new Promise(() => {})',
    fails: 'async () => { throw new Error("pool already closed"); }',
  }[stop];
  const script = `
    const { onShutdownSignal } = require(${JSON.stringify(COMPILED)});
    onShutdownSignal(${body}, { name: 'probe', deadlineMs: 300 });
    setInterval(() => {}, 1000);
    console.log('ready');`;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.once('data', () => child.kill('SIGTERM'));
    child.once('exit', (code) => resolve({ code, stderr }));
  });
}

describe('onShutdownSignal', () => {
  it('lets a clean stop exit 0 without a line', async () => {
    expect(await runWithStop('clean')).toEqual({ code: 0, stderr: '' });
  });

  it('forces an exit with one clear line when the stop outlives its deadline', async () => {
    const result = await runWithStop('hangs');
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ level: 'error', service: 'probe', msg: 'did not stop within 300 ms of SIGTERM; forcing exit' });
  });

  it('ends with one clear line when the stop fails', async () => {
    const result = await runWithStop('fails');
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr.trim())).toMatchObject({ level: 'error', msg: 'stopping failed: pool already closed' });
  });
});
