import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { buildEventEnvelope } from '@cars/contracts';
import { verifyWebhook } from '@cars/signing';
import { createIsolatedDatabase, openTestDataSource } from '@cars/testing';
import { DataSource } from 'typeorm';
import { createTestAccount } from './support/accounts';
import { request } from './support/http';
import { freePort, waitForOk } from './support/processes';
import { Receiver, startReceiver } from './support/receiver';

const STANDALONE = join(__dirname, '../../dist/apps/standalone/src/main.js');

/**
 * The quick start delivers webhooks with the same code as the distributed worker, without a
 * broker: a test event and an outbox event reach a loopback receiver, signed.
 */
describe('quick start delivers webhooks', () => {
  let isolated: { url: string; drop: () => Promise<void> };
  let child: ChildProcess;
  let output = '';
  let base: string;
  let db: DataSource;
  let receiver: Receiver;

  beforeAll(async () => {
    isolated = await createIsolatedDatabase('quick_start_delivery');
    receiver = await startReceiver();
    const port = await freePort();
    const { RABBITMQ_URL: _broker, REDIS_URL: _redis, ...env } = process.env;
    child = spawn(process.execPath, [STANDALONE], {
      env: {
        ...env,
        DATABASE_URL: isolated.url,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOAD_DEMO_DATA: 'false',
        WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    base = `http://127.0.0.1:${port}`;
    await waitForOk(`${base}/health/ready`, 60_000).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${output.slice(-3000)}`);
    });
    const previous = process.env.DATABASE_URL;
    process.env.DATABASE_URL = isolated.url;
    db = await openTestDataSource();
    process.env.DATABASE_URL = previous;
  }, 90_000);

  afterAll(async () => {
    await db?.destroy();
    if (child && child.exitCode === null) {
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    }
    await receiver?.close();
    await isolated?.drop();
  });

  it('sends a test event and an outbox event, signed', async () => {
    const account = await createTestAccount(db, { plan: '10k' });
    const auth = { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' };
    const created = await request(`${base}/webhooks`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url: receiver.url('/quick'), event_types: ['auction.ended'] }),
    });
    expect(created.status).toBe(201);
    const test = await request(`${base}/webhooks/${created.body.data.id}/test`, { method: 'POST', headers: auth });
    expect(test.status).toBe(202);
    const [{ now }] = await db.query(`SELECT now() AS now`);
    const envelope = buildEventEnvelope('auction.ended', { auction: { id: '1' }, changes: {} } as never, now);
    await db.query(
      `INSERT INTO events (id, type, api_version, created_at, payload, make, source) VALUES ($1, 'auction.ended', $2, $3, $4, 'Porsche', 'bringatrailer')`,
      [envelope.id, envelope.api_version, now, JSON.stringify(envelope)],
    );
    const deadline = Date.now() + 15_000;
    while (receiver.received.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const ids = receiver.received.map((r) => (verifyWebhook(created.body.secret, r.body, r.headers) as { id: string }).id).sort();
    expect(ids).toEqual([test.body.data.event_id, envelope.id].sort());
  }, 60_000);
});
