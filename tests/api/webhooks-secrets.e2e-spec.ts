import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { generateMasterKey, SecretCipher } from '@cars/signing';
import { createDataSource } from '@cars/persistence';
import { createIsolatedDatabase, createVhost, deleteVhost } from '@cars/testing';
import { DataSource } from 'typeorm';
import { createTestAccount } from './support/accounts';
import { AppProcess, freePort, startApp, waitForOk } from './support/processes';
import { WebhooksApi } from './support/webhooks-api';

const run = promisify(execFile);
const ADMIN = join(__dirname, '../../dist/tools/admin/src/main.js');

/**
 * Secrets at rest and in logs, with the apps as the deploy runs them (separate processes, debug
 * logs): a secret appears in the create and rotate responses only — never in any line either app
 * printed — and an operator can move every secret to a new master key.
 */
describe('webhook secrets: logs, boot and master-key rotation', () => {
  const vhostName = `${process.env.TEST_RUN_ID}_webhook_secrets`;
  const oldKey = generateMasterKey();
  const newKey = generateMasterKey();
  let env: Record<string, string>;
  let db: DataSource;
  // A database of its own: `secrets:reencrypt` rewrites every secret it holds, and other specs'
  // endpoints are sealed under the run's key, not this spec's.
  let isolated: { url: string; drop: () => Promise<void> };
  const apps: AppProcess[] = [];

  const start = async (key: string, extra: Record<string, string> = {}) => {
    const webhooks = startApp('webhooks', { ...env, WEBHOOK_SECRET_KEY: key, HEALTH_PORT: String(await freePort()), LOG_LEVEL: 'trace', ...extra });
    const port = await freePort();
    const gateway = startApp('gateway', { ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'trace' });
    apps.push(webhooks, gateway);
    const url = `http://127.0.0.1:${port}`;
    await waitForOk(`${url}/health/ready`, 30_000);
    return { url, webhooks, gateway };
  };

  beforeAll(async () => {
    isolated = await createIsolatedDatabase('webhook_secrets');
    env = { DATABASE_URL: isolated.url, RABBITMQ_URL: createVhost(vhostName), DATABASE_POOL_SIZE: '3' };
    db = await createDataSource({ url: isolated.url, poolSize: 2 }).initialize();
  }, 30_000);

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()));
    deleteVhost(vhostName);
    await db?.destroy();
    await isolated?.drop();
  });

  it('refuses to start the webhooks app without a usable WEBHOOK_SECRET_KEY, saying why', async () => {
    for (const [key, says] of [
      ['', 'WEBHOOK_SECRET_KEY is required'],
      ['not-a-key', 'WEBHOOK_SECRET_KEY: key 1 is not base64 of 32 bytes'],
    ]) {
      const app = startApp('webhooks', { ...env, WEBHOOK_SECRET_KEY: key, HEALTH_PORT: '0' });
      const code = await new Promise<number | null>((resolve) => app.child.once('exit', resolve));
      expect({ key, code }).toEqual({ key, code: 1 });
      expect(app.output()).toContain(says);
      expect(app.output()).not.toContain(oldKey);
    }
  }, 30_000);

  it('never logs a secret: create, rotate, test, edit, list and errors at trace level', async () => {
    const { url, webhooks, gateway } = await start(oldKey);
    const api = await WebhooksApi.open(url);
    const account = await createTestAccount(db, { plan: '100k' });
    const secrets: string[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const created = await api.post(account.apiKey, '/webhooks', {
        url: `https://hooks-${i}.example.invalid/cars`,
        event_types: ['auction.ended'],
      });
      expect(created.status).toBe(201);
      secrets.push(created.body.secret);
      ids.push(created.body.data.id);
      const rotated = await api.post(account.apiKey, `/webhooks/${created.body.data.id}/secret/rotate`);
      expect(rotated.status).toBe(200);
      secrets.push(rotated.body.data.secret);
    }
    expect((await api.post(account.apiKey, `/webhooks/${ids[0]}/test`)).status).toBe(202);
    expect((await api.patch(account.apiKey, `/webhooks/${ids[0]}`, { description: 'edited' })).status).toBe(200);
    expect((await api.patch(account.apiKey, `/webhooks/${ids[0]}`, { url: 'https://127.0.0.1/x' })).status).toBe(400);
    expect((await api.get(account.apiKey, '/webhooks')).status).toBe(200);
    expect((await api.get(account.apiKey, `/webhooks/${ids[0]}/deliveries`)).status).toBe(200);

    await Promise.all([webhooks.stop(), gateway.stop()]);
    const logs = webhooks.output() + gateway.output();
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of secrets) {
      expect(logs).not.toContain(secret);
      expect(logs).not.toContain(secret.slice('whsec_'.length));
    }
    expect(logs).not.toContain(oldKey);
    const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM webhook_subscriptions WHERE account_id = $1`, [account.accountId]);
    expect(n).toBe(3);

    // Master-key rotation: the new key first, the old one after it, then re-encrypt every secret.
    const admin = async (key: string) => {
      const { stdout } = await run(process.execPath, [ADMIN, 'secrets:reencrypt'], {
        env: { ...process.env, ...env, WEBHOOK_SECRET_KEY: key },
      });
      expect(stdout).not.toContain('whsec_');
      return JSON.parse(stdout.trim().split('\n').pop()!) as { key_id: string; secrets_reencrypted: number };
    };
    const first = await admin(`${newKey},${oldKey}`);
    const cipher = SecretCipher.fromEnv(newKey);
    expect(first.key_id).toBe(cipher.currentKeyId);
    expect(first.secrets_reencrypted).toBe(6);
    expect((await admin(`${newKey},${oldKey}`)).secrets_reencrypted).toBe(0);
    const rows: { secret_ciphertext: string; secret_key_id: string; previous_secret_ciphertext: string; previous_secret_key_id: string }[] =
      await db.query(
        `SELECT secret_ciphertext, secret_key_id, previous_secret_ciphertext, previous_secret_key_id
           FROM webhook_subscriptions WHERE account_id = $1 ORDER BY created_at`,
        [account.accountId],
      );
    // Under the new key alone, the current secrets are the rotated ones and the kept ones the first ones.
    expect(rows.map((r) => cipher.decrypt(r.secret_ciphertext, r.secret_key_id))).toEqual([secrets[1], secrets[3], secrets[5]]);
    expect(rows.map((r) => cipher.decrypt(r.previous_secret_ciphertext, r.previous_secret_key_id))).toEqual([secrets[0], secrets[2], secrets[4]]);

    // The app runs under the new key alone and keeps managing the endpoints.
    const again = await start(newKey);
    const api2 = await WebhooksApi.open(again.url);
    const rotated = await api2.post(account.apiKey, `/webhooks/${ids[1]}/secret/rotate`);
    expect(rotated.status).toBe(200);
    const [row] = await db.query(`SELECT previous_secret_ciphertext, previous_secret_key_id FROM webhook_subscriptions WHERE id = $1`, [
      ids[1].slice(4),
    ]);
    expect(cipher.decrypt(row.previous_secret_ciphertext, row.previous_secret_key_id)).toBe(secrets[3]);
    await Promise.all([again.webhooks.stop(), again.gateway.stop()]);
  }, 90_000);

  it('allows local receivers only when the operator says so, and says so loudly at start', async () => {
    const account = await createTestAccount(db, { plan: '10k' });
    const local = { url: 'http://127.0.0.1:8080/hook', event_types: ['bid.created'] };
    const strict = await start(oldKey);
    expect((await (await WebhooksApi.open(strict.url)).post(account.apiKey, '/webhooks', local)).status).toBe(400);
    expect(strict.webhooks.output()).not.toContain('WEBHOOK_ALLOW_PRIVATE_DESTINATIONS');
    await Promise.all([strict.webhooks.stop(), strict.gateway.stop()]);

    const relaxed = await start(oldKey, { WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: 'true' });
    const created = await (await WebhooksApi.open(relaxed.url)).post(account.apiKey, '/webhooks', local);
    expect(created.status).toBe(201);
    expect(relaxed.webhooks.output()).toMatch(/WEBHOOK_ALLOW_PRIVATE_DESTINATIONS=true.*never in production/);
    await Promise.all([relaxed.webhooks.stop(), relaxed.gateway.stop()]);
  }, 60_000);
});
