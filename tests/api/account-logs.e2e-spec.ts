import { randomUUID } from 'node:crypto';
import { setPlan } from '@cars/accounts';
import { createVhost, deleteVhost, openTestDataSource } from '@cars/testing';
import { DataSource } from 'typeorm';
import { ConsoleClient, OpenApiConformance, startMailCapture, verificationTokenIn } from './support/account-area';
import { bearer, request } from './support/http';
import { AppProcess, freePort, startApp, waitForOk } from './support/processes';
import { pgPoolOf } from '@cars/persistence';

jest.setTimeout(90_000);

const PASSWORD = 'first password, long enough';
const NEW_PASSWORD = 'second password, long enough';

/**
 * Nothing secret of the account area reaches a log line: the gateway and webhooks apps as deployed
 * (compiled, separate processes, LOG_LEVEL=trace) through a whole console session — passwords,
 * session tokens, CSRF tokens, verification tokens (mail over SMTP), API keys and webhook secrets.
 * Without SMTP the verification link is logged on purpose, in exactly one info line.
 */
describe('account area: secrets never reach the logs', () => {
  const vhostName = `${process.env.TEST_RUN_ID}_account_logs`;
  let env: Record<string, string>;
  let db: DataSource;
  let mail: Awaited<ReturnType<typeof startMailCapture>>;
  const apps: AppProcess[] = [];

  const startGateway = async (extra: Record<string, string>) => {
    const port = await freePort();
    const gateway = startApp('gateway', { ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'trace', ...extra });
    apps.push(gateway);
    const url = `http://127.0.0.1:${port}`;
    await waitForOk(`${url}/health/ready`, 30_000);
    return { url, gateway };
  };

  beforeAll(async () => {
    db = await openTestDataSource();
    mail = await startMailCapture();
    env = { DATABASE_URL: process.env.DATABASE_URL!, RABBITMQ_URL: createVhost(vhostName), DATABASE_POOL_SIZE: '3' };
  }, 30_000);

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()));
    deleteVhost(vhostName);
    await mail?.close();
    await db?.destroy();
  });

  it('logs no password, session or CSRF token, verification token, API key or webhook secret', async () => {
    const webhooks = startApp('webhooks', { ...env, HEALTH_PORT: String(await freePort()), LOG_LEVEL: 'trace' });
    apps.push(webhooks);
    const { url, gateway } = await startGateway({ SMTP_URL: mail.url, MAIL_FROM: 'no-reply@cars.example.test' });
    const conformance = await OpenApiConformance.load(url);
    const secrets: string[] = [PASSWORD, NEW_PASSWORD];
    const address = `logs-${randomUUID()}@example.test`;

    const browser = new ConsoleClient(url, conformance);
    const signedUp = await browser.signUp(address, PASSWORD);
    expect(signedUp.status).toBe(201);
    secrets.push(browser.cookie!, browser.csrf!);
    const token = verificationTokenIn((await mail.waitFor(address)).raw)!;
    secrets.push(token);

    expect((await new ConsoleClient(url, conformance).post('/account/signin', { email: address, password: 'a wrong password here' })).status).toBe(401);
    expect((await browser.post('/account/signin', { email: address, password: 'x' })).status).toBe(401);
    const second = new ConsoleClient(url, conformance);
    expect((await second.post('/account/signin', { email: address, password: PASSWORD })).status).toBe(200);
    secrets.push(second.cookie!, second.csrf!);
    // Refused changes are logged as such, with no token in them.
    expect((await browser.post('/account/keys', undefined, { csrf: false, headers: { 'x-csrf-token': second.csrf! } })).status).toBe(403);

    expect((await browser.post('/account/verify-email', { token })).status).toBe(200);
    expect((await browser.post('/account/verify-email', { token })).status).toBe(400);
    expect((await browser.post('/account/password', { current_password: PASSWORD, new_password: NEW_PASSWORD })).status).toBe(204);
    expect((await browser.post('/account/password', { current_password: PASSWORD, new_password: NEW_PASSWORD })).status).toBe(403);

    const created = await browser.post('/account/keys');
    expect(created.status).toBe(201);
    const apiKey: string = created.body.api_key;
    secrets.push(apiKey);
    // The data API with the key (no query service on this vhost: a logged 503).
    await request(`${url}/auctions?limit=1`, bearer(apiKey));
    await request(`${url}/auctions`, { headers: { cookie: `cars_session=${browser.cookie}` } });

    await setPlan(pgPoolOf(db), { accountId: signedUp.body.account.id, plan: '10k' });
    const hook = await browser.post('/account/webhooks', { url: 'https://hooks.example.invalid/console', event_types: ['auction.ended'] });
    expect(hook.status).toBe(201);
    secrets.push(hook.body.secret);
    const rotated = await browser.post(`/account/webhooks/${hook.body.data.id}/secret/rotate`);
    expect(rotated.status).toBe(200);
    secrets.push(rotated.body.data.secret);
    expect((await browser.delete(`/account/keys/${created.body.key.id}`)).status).toBe(204);
    expect((await browser.post('/account/signout')).status).toBe(204);

    await Promise.all([webhooks.stop(), gateway.stop()]);
    const logs = webhooks.output() + gateway.output();
    expect(logs).toMatch(/trace|debug/);
    for (const secret of secrets) {
      expect({ secret: secret.slice(0, 6), found: logs.includes(secret) }).toEqual({ secret: secret.slice(0, 6), found: false });
    }
    for (const secret of [hook.body.secret, rotated.body.data.secret]) expect(logs).not.toContain(secret.slice('whsec_'.length));
    expect(logs).not.toContain('/console/verify?token=');
  });

  it('without SMTP_URL logs the verification link in one info line, and nothing else secret', async () => {
    const { url, gateway } = await startGateway({});
    const conformance = await OpenApiConformance.load(url);
    const address = `logs-${randomUUID()}@example.test`;
    const browser = new ConsoleClient(url, conformance);
    expect((await browser.signUp(address, PASSWORD)).status).toBe(201);
    const deadline = Date.now() + 5000;
    while (!gateway.output().includes('/console/verify?token=') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await gateway.stop();
    const lines = gateway.output().split('\n');
    const withLink = lines.filter((line) => line.includes('/console/verify?token='));
    expect(withLink).toHaveLength(1);
    expect(JSON.parse(withLink[0])).toMatchObject({ level: 'info', msg: expect.stringContaining(`Email verification for ${address}: open ${url}/console/verify?token=`) });
    const token = verificationTokenIn(withLink[0])!;
    expect(lines.filter((line) => line.includes(token))).toHaveLength(1);
    const all = gateway.output();
    for (const secret of [PASSWORD, browser.cookie!, browser.csrf!]) expect(all).not.toContain(secret);
    expect(all).toContain('SMTP_URL is not set: verification links are written to this log');
  });
});
