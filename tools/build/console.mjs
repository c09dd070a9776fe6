// Bundles the account console (libs/console/src/web) with esbuild into dist/libs/console/static:
// index.html, favicon.svg and content-hashed assets (app-<hash>.js, app-<hash>.css, with source
// maps). uPlot's script and stylesheet are bundled in: nothing is loaded from another origin.
// Skipped when the bundle is newer than every source (and than uPlot).
import { build } from 'esbuild';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

/** @returns {Promise<boolean>} whether it bundled (false: already up to date) */
export async function buildConsole(root) {
  const web = join(root, 'libs', 'console', 'src', 'web');
  const out = join(root, 'dist', 'libs', 'console', 'static');
  const stamp = join(out, 'index.html');
  const inputs = Math.max(newest(web), statSync(join(root, 'node_modules', 'uplot', 'package.json')).mtimeMs, statSync(import.meta.filename).mtimeMs);
  if (existsSync(stamp) && statSync(stamp).mtimeMs >= inputs) return false;

  const staging = `${out}.next-${process.pid}`; // concurrent builds each stage their own
  rmSync(staging, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: { app: join(web, 'main.ts'), styles: join(web, 'styles', 'index.css') },
    outdir: join(staging, 'assets'),
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    minify: true,
    sourcemap: 'linked',
    legalComments: 'eof',
    tsconfig: join(web, 'tsconfig.json'),
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.entries(result.metafile.outputs);
  const entry = (name) => {
    const found = outputs.find(([path, meta]) => meta.entryPoint !== undefined && basename(path).startsWith(`${name}-`) && !path.endsWith('.map'));
    if (!found) throw new Error(`console build: no output for ${name}`);
    return `/console/assets/${basename(found[0])}`;
  };
  const html = readFileSync(join(web, 'index.html'), 'utf8')
    .replaceAll('%APP_JS%', entry('app'))
    .replaceAll('%APP_CSS%', entry('styles'));
  writeFileSync(join(staging, 'index.html'), html);
  cpSync(join(web, 'favicon.svg'), join(staging, 'favicon.svg'));

  mkdirSync(join(out, '..'), { recursive: true });
  rmSync(out, { recursive: true, force: true });
  try {
    renameSync(staging, out);
  } catch (error) {
    // Another build put its (identical) bundle in place between the two steps.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(stamp)) throw error;
  }
  return true;
}
