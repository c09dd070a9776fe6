import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@cars/runtime';
import { AppProcess, createDatabase, createVhost, deleteVhost, dropDatabase, startApp, waitForOk } from '@cars/testing';
import { Manifest, parseManifests } from './manifest-policies';
import { checkSeries, exportedSeries, seriesOfDashboard, seriesOfRules } from './monitoring-checks';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const APPS = ['gateway', 'query', 'stats', 'webhooks', 'change-detector', 'delivery-worker'];

/**
 * Every series the PrometheusRule and the Grafana dashboard of k8s/monitoring name is one the
 * apps serve: each app is started (compiled, as in the image) and its live /metrics read on its
 * health port, where the PodMonitor scrapes. A series
 * is listed by its `# TYPE` line before any sample, so no traffic is needed.
 */
describe('k8s/monitoring names only series the apps export', () => {
  const name = `${process.env.TEST_RUN_ID}_monitoring_series`.toLowerCase();
  const apps: AppProcess[] = [];
  const exported = new Map<string, Set<string>>();

  beforeAll(async () => {
    const env = { DATABASE_URL: await createDatabase(name), RABBITMQ_URL: createVhost(name), DATABASE_POOL_SIZE: '2', LOG_LEVEL: 'warn' };
    await run(process.execPath, [join(ROOT, 'dist/tools/admin/src/main.js'), 'db:migrate'], { env: { ...process.env, ...env } });
    await Promise.all(
      APPS.map(async (app) => {
        const port = await freePort();
        // Read where the PodMonitor scrapes: the health port, the gateway's too (its API on a port of its own).
        const api: Record<string, string> = app === 'gateway' ? { PORT: String(await freePort()), HOST: '127.0.0.1' } : {};
        const settings = { ...api, HEALTH_PORT: String(port) };
        const process = startApp(app, { ...env, ...settings });
        apps.push(process);
        const base = `http://127.0.0.1:${port}`;
        try {
          await waitForOk(`${base}/health/live`, 30_000);
        } catch (error) {
          throw new Error(`${app} did not start: ${(error as Error).message}\n${process.output().slice(-2000)}`);
        }
        const res = await fetch(`${base}/metrics`);
        expect([app, res.status]).toEqual([app, 200]);
        exported.set(app, exportedSeries(await res.text()));
      }),
    );
  }, 60_000);

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()));
    deleteVhost(name);
    await dropDatabase(name);
  });

  it('finds every series of the rules and the dashboard in some app’s /metrics', () => {
    const monitoring = join(ROOT, 'k8s/monitoring');
    const rule = parseManifests(readFileSync(join(monitoring, 'prometheus-rule.yaml'), 'utf8')).find((m: Manifest) => m.kind === 'PrometheusRule')!;
    const dashboard = JSON.parse(readFileSync(join(monitoring, 'dashboard.json'), 'utf8')) as Parameters<typeof seriesOfDashboard>[0];
    const uses = seriesOfDashboard(dashboard, seriesOfRules(rule));
    const all = new Set([...exported.values()].flatMap((series) => [...series]));
    expect(uses.size).toBeGreaterThan(15);
    expect(checkSeries(uses, all)).toEqual([]);
  });

  it('serves the series of each app where operations.md says (gateway: HTTP and RPC; change-detector: outbox; delivery-worker: deliveries)', () => {
    expect([...exported.get('gateway')!]).toEqual(expect.arrayContaining(['http_requests_total', 'api_allowance_rejections_total', 'rpc_client_duration_seconds_bucket']));
    expect([...exported.get('change-detector')!]).toEqual(expect.arrayContaining(['outbox_oldest_unpublished_event_age_seconds', 'pending_observations', 'messages_consumed_total']));
    expect([...exported.get('delivery-worker')!]).toEqual(expect.arrayContaining(['webhook_deliveries_waiting', 'webhook_delivery_attempts_total']));
  });

  it('reports a series that no app exports, naming the rule or panel', () => {
    const renamed = new Map([['webhook_oldest_pending_delivery_age', ['PrometheusRule/classic-car-auctions CarsDeliveryBacklogAge']]]);
    const all = new Set([...exported.values()].flatMap((series) => [...series]));
    expect(checkSeries(renamed, all)).toEqual([
      'webhook_oldest_pending_delivery_age (PrometheusRule/classic-car-auctions CarsDeliveryBacklogAge) is exported by no app',
    ]);
  });
});
