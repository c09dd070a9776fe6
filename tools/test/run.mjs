// Runs the whole jest suite and ends with the plain summary line `N passed, N failed`.
// Extra arguments go to jest (e.g. `npm test -- libs/services/query`).
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, existsSync } from 'node:fs';
import { join, dirname, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const results = join(tmpdir(), `cars-test-results-${process.pid}.json`);
rmSync(results, { force: true });

// Processes spawned by end-to-end specs run the compiled output.
const build = spawnSync(process.execPath, [join(root, 'tools/build/build.mjs'), '--quiet'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const jest = spawnSync(
  process.execPath,
  [join(root, 'node_modules/jest/bin/jest.js'), '--json', `--outputFile=${results}`, ...process.argv.slice(2)],
  { stdio: 'inherit', cwd: root, env: { ...process.env, NODE_ENV: 'test' } },
);

let passed = 0;
let failed = 0;
if (existsSync(results)) {
  const summary = JSON.parse(readFileSync(results, 'utf8'));
  passed = summary.numPassedTests;
  failed = summary.numFailedTests + summary.numRuntimeErrorTestSuites;
  rmSync(results, { force: true });
}
// A run that broke before reporting (global setup, config) counts as one failure.
if (jest.status !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed`);
process.exit(jest.status === 0 && failed === 0 ? 0 : 1);
