import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Startup, StartupStopped } from './process-utils';

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

describe('Startup', () => {
  /** A step that resolves when told to. */
  function gate(): { promise: Promise<void>; open: () => void } {
    let open!: () => void;
    const promise = new Promise<void>((resolve) => (open = resolve));
    return { promise, open };
  }

  it('closes what the steps opened in the reverse order, after the step in progress, and lets no step begin after a stop', async () => {
    const startup = new Startup();
    const closed: string[] = [];
    await startup.step(async () => startup.onStop(async () => void closed.push('database')));
    const migrations = gate();
    const running = startup.step(async () => {
      startup.onStop(async () => void closed.push('pool'));
      await migrations.promise;
    });
    const stopping = startup.stop();
    // The step in progress is waited for: nothing is closed under it.
    await Promise.resolve();
    expect(closed).toEqual([]);
    migrations.open();
    await expect(running).rejects.toBeInstanceOf(StartupStopped);
    await stopping;
    expect(closed).toEqual(['pool', 'database']);
    let ran = false;
    await expect(startup.step(async () => void (ran = true))).rejects.toBeInstanceOf(StartupStopped);
    expect(ran).toBe(false);
    expect(startup.stopped).toBe(true);
  });

  it('still closes what was opened when the step in progress fails', async () => {
    const startup = new Startup();
    const closed: string[] = [];
    await startup.step(async () => startup.onStop(async () => void closed.push('database')));
    const failing = startup.step(async () => {
      await Promise.resolve();
      throw new Error('migration failed');
    });
    await Promise.all([expect(failing).rejects.toThrow('migration failed'), startup.stop()]);
    expect(closed).toEqual(['database']);
  });
});
