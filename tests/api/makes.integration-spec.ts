import { openTestDataSource, truncate } from '@cars/testing';
import { request } from './support/http';
import { startTestStack, TestStack } from './support/stack';
import { DataSource } from 'typeorm';

describe('GET /makes and /models through the gateway over RabbitMQ', () => {
  let stack: TestStack;
  let db: DataSource;

  beforeAll(async () => {
    db = await openTestDataSource();
    await truncate(db, 'models', 'makes');
    await db.query(`INSERT INTO makes (name) VALUES ('Porsche'), ('Alfa Romeo'), ('Mercedes-Benz')`);
    await db.query(
      `INSERT INTO models (make_id, name) SELECT id, m FROM makes, unnest(ARRAY['911', '356', 'Boxster']) m WHERE name = 'Porsche'`,
    );
    stack = await startTestStack();
  });

  afterAll(async () => {
    await stack?.close();
    await db?.destroy();
  });

  it('lists every make, sorted alphabetically', async () => {
    const res = await request(`${stack.url}/makes`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: ['Alfa Romeo', 'Mercedes-Benz', 'Porsche'] });
  });

  it('lists the models of one make, sorted', async () => {
    const res = await request(`${stack.url}/models?make=Porsche`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: ['356', '911', 'Boxster'] });
  });

  it('answers 400 with details.make when make is missing or empty', async () => {
    for (const query of ['', '?make=']) {
      const res = await request(`${stack.url}/models${query}`);
      expect(res.status).toBe(400);
      const body = res.body;
      expect(body.error).toBe('Validation Error');
      expect(body.details.make.length).toBeGreaterThan(0);
    }
  });

  it('names an unknown parameter in details', async () => {
    const res = await request(`${stack.url}/models?make=Porsche&mdoel=911`);
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual({ mdoel: ['mdoel is not a recognised parameter'] });
  });

  it('points an unknown or wrongly-cased make to /makes', async () => {
    const unknown = await request(`${stack.url}/models?make=Trabant`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.details.make[0]).toContain('/makes');
    const cased = await request(`${stack.url}/models?make=porsche`);
    expect(cased.status).toBe(400);
    expect(cased.body.details.make[0]).toContain('"Porsche"');
  });

  it('answers unknown routes with the error envelope', async () => {
    const res = await request(`${stack.url}/no-such-route`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'Not Found', message: 'No route GET /no-such-route' });
  });
});
