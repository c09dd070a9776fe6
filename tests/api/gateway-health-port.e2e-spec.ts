import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createDataSource } from '@cars/persistence';
import { createDatabase, createVhost, deleteVhost, dropDatabase } from '@cars/testing';
import { DataSource } from 'typeorm';
import { createTestAccount } from './support/accounts';
import { bearer, request } from './support/http';
import { AppProcess, freePort, startApp, waitForOk } from './support/processes';
import { parsePrometheus, sampleValue } from './support/prometheus';

const run = promisify(execFile);
const DIST = join(__dirname, '../../dist/tools');

/**
 * With HEALTH_PORT set (8081 in the manifests), the gateway serves /health/live, /health/ready and
 * /metrics on that port too — where the probes and the scraper go, so that neither needs the API
 * port — with the readiness of its public /health/ready; the API stays on PORT and only there.
 */
describe('gateway with HEALTH_PORT', () => {
  const name = `${process.env.TEST_RUN_ID}_gw_health_port`.toLowerCase();
  const apps: AppProcess[] = [];
  let db: DataSource;
  let gateway: AppProcess;
  let api: string;
  let health: string;

  beforeAll(async () => {
    const env = { DATABASE_URL: await createDatabase(name), RABBITMQ_URL: createVhost(name), DATABASE_POOL_SIZE: '2', LOG_LEVEL: 'warn' };
    await run(process.execPath, [join(DIST, 'admin', 'src', 'main.js'), 'db:migrate'], { env: { ...process.env, ...env } });
    db = await createDataSource({ url: env.DATABASE_URL, poolSize: 2 }).initialize();
    const queryHealth = await freePort();
    apps.push(startApp('query', { ...env, HEALTH_PORT: String(queryHealth) }));
    await waitForOk(`http://127.0.0.1:${queryHealth}/health/ready`, 30_000);
    const [apiPort, healthPort] = [await freePort(), await freePort()];
    gateway = startApp('gateway', { ...env, PORT: String(apiPort), HOST: '127.0.0.1', HEALTH_PORT: String(healthPort) });
    apps.push(gateway);
    api = `http://127.0.0.1:${apiPort}`;
    health = `http://127.0.0.1:${healthPort}`;
    await waitForOk(`${api}/health/ready`, 30_000).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${gateway.output()}`);
    });
  }, 90_000);

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()));
    await db?.destroy();
    deleteVhost(name);
    await dropDatabase(name);
  });

  it('answers the API on PORT and serves its request metrics as Prometheus text on HEALTH_PORT', async () => {
    const account = await createTestAccount(db);
    const listed = await request(`${api}/auctions?limit=1`, bearer(account.apiKey));
    expect(listed.status).toBe(200);
    expect(Array.isArray(listed.body.data)).toBe(true);

    const res = await fetch(`${health}/metrics`);
    expect([res.status, res.headers.get('content-type')]).toEqual([200, expect.stringContaining('text/plain')]);
    const samples = parsePrometheus(await res.text());
    expect(sampleValue(samples, 'http_requests_total', { method: 'GET', route: '/auctions', status: '200' })).toBeGreaterThanOrEqual(1);
  });

  it('answers /health/live and /health/ready on HEALTH_PORT with the readiness of the public /health/ready', async () => {
    expect(await request(`${health}/health/live`)).toEqual(expect.objectContaining({ status: 200, body: { status: 'ok' } }));
    const [onHealthPort, onApiPort] = await Promise.all([request(`${health}/health/ready`), request(`${api}/health/ready`)]);
    expect(onHealthPort.status).toBe(200);
    expect(onHealthPort.body).toEqual(onApiPort.body);
    expect(onHealthPort.body).toEqual(
      expect.objectContaining({ status: 'ok', checks: { database: 'up', broker: 'up' }, detail: { services: expect.objectContaining({ query: { status: 'up', consumers: 1 } }) } }),
    );
  });

  it('serves no API route on HEALTH_PORT', async () => {
    const account = await createTestAccount(db);
    expect((await request(`${health}/auctions?limit=1`, bearer(account.apiKey))).status).toBe(404);
    expect((await request(`${health}/openapi.json`)).status).toBe(404);
  });

  it('stops both ports and exits 0 on SIGTERM', async () => {
    const exited = new Promise<number | null>((resolve) => gateway.child.once('exit', (code) => resolve(code)));
    gateway.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await expect(fetch(`${health}/health/live`)).rejects.toThrow();
    await expect(fetch(`${api}/health/live`)).rejects.toThrow();
  });
});
