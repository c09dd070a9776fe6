// Compiles every TypeScript source of the workspace to dist/ with swc (decorator metadata
// included, path aliases rewritten to relative imports). Type checking is `npm run typecheck`.
// Incremental: a file is recompiled only when its source is newer than its output.
import { transformFile } from '@swc/core';
import { readFileSync, mkdirSync, writeFileSync, statSync, readdirSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildConsole } from './console.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = join(root, 'dist');
const quiet = process.argv.includes('--quiet');
const consoleWeb = join(root, 'libs', 'console', 'src', 'web');
const { compilerOptions } = JSON.parse(readFileSync(join(root, 'tsconfig.base.json'), 'utf8'));

function* sources(dir) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      // The console's browser sources are bundled by esbuild (below), not compiled for Node.
      if (entry.name !== 'node_modules' && path !== consoleWeb) yield* sources(path);
    } else if (
      entry.name.endsWith('.ts') &&
      !entry.name.endsWith('.d.ts') &&
      !/\.(spec|integration-spec|e2e-spec)\.ts$/.test(entry.name)
    ) {
      yield path;
    }
  }
}

const options = {
  sourceMaps: true,
  module: { type: 'commonjs' },
  jsc: {
    target: 'es2022',
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
    keepClassNames: true,
    baseUrl: root,
    paths: compilerOptions.paths,
  },
};

const started = Date.now();
let compiled = 0;
const jobs = [];
for (const top of ['apps', 'libs', 'tools']) {
  for (const file of sources(join(root, top))) {
    const target = join(out, relative(root, file)).replace(/\.ts$/, '.js');
    if (existsSync(target) && statSync(target).mtimeMs >= statSync(file).mtimeMs) continue;
    jobs.push(
      transformFile(file, { ...options, filename: file, sourceFileName: relative(dirname(target), file) }).then(
        (result) => {
          mkdirSync(dirname(target), { recursive: true });
          writeFileSync(target, `${result.code}\n//# sourceMappingURL=${target.split('/').pop()}.map\n`);
          if (result.map) writeFileSync(`${target}.map`, result.map);
          compiled += 1;
        },
      ),
    );
  }
}
await Promise.all(jobs);
const bundled = await buildConsole(root);
if (!quiet || compiled > 0 || bundled) {
  const console_ = bundled ? ', account console bundled to dist/libs/console/static' : '';
  console.error(`build: ${compiled} file(s) compiled to dist/${console_} in ${Date.now() - started} ms`);
}
