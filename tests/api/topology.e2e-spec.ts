import { once } from 'node:events';
import { createDataSource } from '@cars/persistence';
import { createIsolatedDatabase, createVhost, deleteVhost } from '@cars/testing';
import { DataSource } from 'typeorm';
import { request } from './support/http';
import { AppProcess, freePort, startApp, waitForOk } from './support/processes';

/**
 * The production topology: six apps as separate processes over a RabbitMQ vhost and a PostgreSQL
 * database of this spec's own (the makes it seeds and the RPC queues it uses are its alone: other
 * specs running at the same time seed makes of their own and run query services of their own).
 */
describe('distributed topology (separate processes)', () => {
  const apps = new Map<string, AppProcess>();
  const healthPorts = new Map<string, number>();
  let gatewayUrl: string;
  let db: DataSource;
  let database: { url: string; drop: () => Promise<void> };
  const vhost = `${process.env.TEST_RUN_ID ?? 'cars_test'}_topology`;
  let rabbitUrl: string;

  const env = (extra: Record<string, string>) => ({
    DATABASE_URL: database.url,
    RABBITMQ_URL: rabbitUrl,
    DATABASE_POOL_SIZE: '3',
    ...extra,
  });

  beforeAll(async () => {
    database = await createIsolatedDatabase('topology');
    rabbitUrl = createVhost(vhost);
    db = await createDataSource({ url: database.url, poolSize: 2 }).initialize();
    await db.query(`INSERT INTO makes (name) VALUES ('Porsche'), ('Ferrari')`);
    await db.query(`INSERT INTO models (make_id, name) SELECT id, '911' FROM makes WHERE name = 'Porsche'`);

    for (const name of ['query', 'stats', 'webhooks', 'change-detector', 'delivery-worker']) {
      const port = await freePort();
      healthPorts.set(name, port);
      apps.set(name, startApp(name, env({ HEALTH_PORT: String(port) })));
    }
    const port = await freePort();
    healthPorts.set('gateway', port);
    apps.set('gateway', startApp('gateway', env({ PORT: String(port), HOST: '127.0.0.1', RPC_TIMEOUT_MS: '3000' })));
    gatewayUrl = `http://127.0.0.1:${port}`;
  }, 30000);

  afterAll(async () => {
    await Promise.all([...apps.values()].map((app) => app.stop()));
    await db?.destroy();
    await database?.drop();
    deleteVhost(vhost);
  });

  it('starts the six apps, each reporting ready', async () => {
    for (const [name, port] of healthPorts) {
      await waitForOk(`http://127.0.0.1:${port}/health/ready`).catch((error: unknown) => {
        throw new Error(`${name}: ${String(error)}\n${apps.get(name)!.output()}`);
      });
    }
  }, 60000);

  it('answers /models across RabbitMQ', async () => {
    const res = await request(`${gatewayUrl}/models?make=Porsche`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: ['911'] });
  });

  it('answers 503 within 5 s while the query service is down, and 200 again once it is back', async () => {
    await apps.get('query')!.stop();

    const started = Date.now();
    const down = await request(`${gatewayUrl}/models?make=Porsche`);
    const elapsed = Date.now() - started;
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ error: 'Service Unavailable', message: 'The query service is unavailable; try again shortly' });
    expect(elapsed).toBeLessThan(5000);
    // The gateway stays ready (restarting it would not help) and shows who is missing.
    const readiness = await request(`${gatewayUrl}/health/ready`);
    expect(readiness.status).toBe(200);
    expect(readiness.body.detail.services).toEqual({
      query: { status: 'down', consumers: 0 },
      stats: { status: 'up', consumers: 1 },
      webhooks: { status: 'up', consumers: 1 },
    });

    const port = await freePort();
    apps.set('query', startApp('query', env({ HEALTH_PORT: String(port) })));
    await waitForOk(`http://127.0.0.1:${port}/health/ready`);
    // The gateway was not restarted: the same process answers again.
    const deadline = Date.now() + 10000;
    let back = await request(`${gatewayUrl}/models?make=Porsche`);
    while (back.status !== 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      back = await request(`${gatewayUrl}/models?make=Porsche`);
    }
    expect(back.status).toBe(200);
    expect(back.body).toEqual({ data: ['911'] });
    expect((await request(`${gatewayUrl}/health/ready`)).body.detail.services.query).toEqual({ status: 'up', consumers: 1 });
  }, 40000);

  it('never writes the Authorization header to the logs', async () => {
    const headers = { authorization: 'Bearer cca_secret_value_123' };
    expect((await request(`${gatewayUrl}/models?make=Porsche`, { headers })).status).toBe(200);
    expect((await request(`${gatewayUrl}/no-such-route`, { headers })).status).toBe(404);
    // The gateway's whole log: the process stopped (the last test here) and its output read to the end.
    const gateway = apps.get('gateway')!;
    const ended = Promise.all([gateway.child.stdout!, gateway.child.stderr!].map((stream) => (stream.readableEnded ? undefined : once(stream, 'end'))));
    await gateway.stop();
    await ended;
    expect(gateway.output()).toContain(`"msg":"listening on ${gatewayUrl}"`);
    expect(gateway.output()).not.toContain('cca_secret_value_123');
  });
});
