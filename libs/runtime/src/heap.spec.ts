import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { BaseEnv } from './config';
import { loadEnv } from './env';
import { DEFAULT_HEAP_GROWING_PERCENT } from './heap';

const COMPILED = join(__dirname, '../../../dist/libs/runtime/src/heap.js');

/**
 * Full collections of a process that keeps ~60 MB of small objects alive and replaces them one
 * block at a time (each block promoted, then garbage), after `setHeapGrowth(percent)`.
 */
function fullCollections(percent: number): number {
  const script = `
    const { PerformanceObserver, constants } = require('node:perf_hooks');
    require(${JSON.stringify(COMPILED)}).setHeapGrowth(${percent});
    let full = 0;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) if (entry.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) full += 1;
    }).observe({ entryTypes: ['gc'] });
    const blocks = new Array(150);
    for (let i = 0; i < 1500; i += 1) {
      const block = new Array(10000);
      for (let j = 0; j < block.length; j += 1) block[j] = { i, j };
      blocks[i % blocks.length] = block;
    }
    setTimeout(() => console.log(full), 50);`;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 60_000 });
  if (run.status !== 0) throw new Error(`probe failed: ${run.stderr}`);
  return Number(run.stdout.trim());
}

describe('setHeapGrowth', () => {
  it('sets how far the heap grows between full collections', () => {
    // A factor of 1.1 against 4: the same work, several times the full collections.
    const tight = fullCollections(10);
    const roomy = fullCollections(DEFAULT_HEAP_GROWING_PERCENT);
    expect(roomy).toBeGreaterThan(0);
    expect(tight).toBeGreaterThanOrEqual(3 * roomy);
  });

  it('refuses a value V8 would misread', async () => {
    const { setHeapGrowth } = await import('./heap');
    expect(() => setHeapGrowth(-1)).toThrow(RangeError);
    expect(() => setHeapGrowth(1.5)).toThrow(RangeError);
  });
});

describe('HEAP_GROWING_PERCENT', () => {
  it('defaults to V8’s own ceiling and takes 0 (V8 decides) to 1000', () => {
    expect(loadEnv(BaseEnv, {}).HEAP_GROWING_PERCENT).toBe(DEFAULT_HEAP_GROWING_PERCENT);
    expect(loadEnv(BaseEnv, { HEAP_GROWING_PERCENT: '0' }).HEAP_GROWING_PERCENT).toBe(0);
    expect(() => loadEnv(BaseEnv, { HEAP_GROWING_PERCENT: '1001' })).toThrow(/HEAP_GROWING_PERCENT/);
    expect(() => loadEnv(BaseEnv, { HEAP_GROWING_PERCENT: 'lots' })).toThrow(/HEAP_GROWING_PERCENT/);
  });
});
