import { execFileSync, spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

const PROBES = {
  serviceToService: {
    path: 'libs/services/query/src/boundary-probe-service.ts',
    source: `import { StatsModule } from '@cars/service-stats';\nexport const probe = StatsModule;\n`,
  },
  appToApp: {
    path: 'apps/query/src/boundary-probe-app.ts',
    source: `import '../../gateway/src/main';\nexport const probe = 1;\n`,
  },
  // A shared lib outside the testing lib's own dependencies (service specs import the testing
  // lib, so a probe from one of those would be reported as a cycle before the tag rule).
  sharedToService: {
    path: 'libs/net-guard/src/boundary-probe-shared.ts',
    source: `import { QueryModule } from '@cars/service-query';\nexport const probe = QueryModule;\n`,
  },
  allowed: {
    path: 'libs/services/query/src/boundary-probe-ok.ts',
    source: `import { Queues } from '@cars/contracts';\nimport { DatabaseModule } from '@cars/persistence';\nexport const probe = [Queues, DatabaseModule];\n`,
  },
};

/**
 * The architecture's import rules (docs/architecture.md, "Module boundaries") are enforced by lint:
 * these probes are real files written into the projects, linted by the workspace's eslint, then
 * removed.
 */
describe('module boundaries', () => {
  const boundaryMessages = new Map<string, string[]>();

  beforeAll(() => {
    const env = { ...process.env, NX_DAEMON: 'false' };
    // The boundaries rule reads Nx's project graph.
    execFileSync(process.execPath, [join(ROOT, 'node_modules/nx/dist/bin/nx.js'), 'show', 'projects'], { cwd: ROOT, env, stdio: 'ignore' });
    try {
      for (const probe of Object.values(PROBES)) writeFileSync(join(ROOT, probe.path), probe.source);
      const run = spawnSync(
        process.execPath,
        [join(ROOT, 'node_modules/eslint/bin/eslint.js'), '--format', 'json', ...Object.values(PROBES).map((p) => p.path)],
        { cwd: ROOT, env, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
      );
      const results = JSON.parse(run.stdout) as { filePath: string; messages: { ruleId: string | null; message: string }[] }[];
      for (const result of results) {
        boundaryMessages.set(
          result.filePath,
          result.messages.filter((m) => m.ruleId === '@nx/enforce-module-boundaries').map((m) => m.message),
        );
      }
    } finally {
      for (const probe of Object.values(PROBES)) rmSync(join(ROOT, probe.path), { force: true });
    }
  }, 120000);

  const messagesOf = (probe: { path: string }) => boundaryMessages.get(join(ROOT, probe.path)) ?? [];

  it('rejects one service lib importing another', () => {
    expect(messagesOf(PROBES.serviceToService).join('\n')).toMatch(/tagged with "type:service" can only depend on/);
  });

  it('rejects an app importing another app', () => {
    expect(messagesOf(PROBES.appToApp).length).toBeGreaterThan(0);
  });

  it('rejects a shared lib importing a service lib', () => {
    expect(messagesOf(PROBES.sharedToService).join('\n')).toMatch(/tagged with "type:shared" can only depend on/);
  });

  it('accepts a service lib importing shared libs and contracts', () => {
    expect(boundaryMessages.has(join(ROOT, PROBES.allowed.path))).toBe(true);
    expect(messagesOf(PROBES.allowed)).toEqual([]);
  });
});
