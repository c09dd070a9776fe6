import { ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@cars/runtime';
import { createIsolatedDatabase } from '@cars/testing';
import { Client } from 'pg';
import type { Browser, Page } from 'playwright-core';
import { DESKTOP, launchChromium, screenshots, watchPage } from './support/browser';
import { Standalone, startStandalone } from './support/standalone';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const ADMIN = join(ROOT, 'dist', 'tools', 'admin', 'src', 'main.js');
const RECEIVER = join(ROOT, 'dist', 'tools', 'examples', 'receiver', 'src', 'main.js');
const SWITCH = 'WEBHOOK_ALLOW_PRIVATE_DESTINATIONS=true';

/**
 * A new user's first webhook on their own machine, following only what the README, the start
 * banner and the console say: the strict quick start refuses the local URL and names the switch
 * (banner, console form); restarted with the switch as the README shows, the console creates an
 * endpoint at the example receiver's address, "Send test event" delivers, and the example receiver
 * (`npm run example:receiver -- --secret … --port …`) prints the verified event.
 */
describe('local receiver in the quick start (browser)', () => {
  let isolated: { url: string; drop: () => Promise<void> };
  let app: Standalone | undefined;
  let browser: Browser;
  let page: Page;
  let problems: string[];
  let receiver: ChildProcess | undefined;
  let receiverOutput = '';
  let receiverPort = 0;

  const email = `local-${randomUUID().slice(0, 8)}@example.test`;
  const password = 'a long enough passphrase';
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

  beforeAll(async () => {
    isolated = await createIsolatedDatabase('console_local_receiver');
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: DESKTOP, locale: 'en-US', timezoneId: 'UTC' })).newPage();
    page.setDefaultTimeout(15_000);
    problems = watchPage(page);
    receiverPort = await freePort();
  }, 120_000);

  afterAll(async () => {
    receiver?.kill('SIGTERM');
    await browser?.close();
    await app?.stop();
    await isolated?.drop();
  }, 60_000);

  it('the README shows how: the switch on npm start, and the example receiver with the secret', () => {
    expect(readme).toContain(`${SWITCH} npm start`);
    expect(readme).toMatch(/npm run example:receiver -- --secret whsec_\S* --port 8080/);
    expect(readme).toMatch(/never set it in production/i);
  });

  it('by default the quick start is strict: the banner and the console form name the switch', async () => {
    app = await startStandalone(isolated.url, { allowPrivateDestinations: false });
    expect(app.output()).toContain(`${SWITCH} npm start`);
    // Sign up; the banner says where the verification link is (the log), the console says the same.
    await page.goto(`${app.base}/console/signup`);
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();
    const banner = page.locator('[data-testid="verify-banner"]');
    await banner.waitFor();
    expect(await banner.textContent()).toContain("in the server's log");
    expect(await banner.textContent()).not.toMatch(/We (sent|emailed)/);
    const link = await waitFor(() => app!.verificationLinks(email)[0]);
    await page.goto(link);
    await page.locator('[data-state="verified"]').waitFor();
    // A paid plan, as the README says: the account id from Settings, then the operator command.
    expect(readme).toContain('copy the account id from Settings');
    expect(readme).toContain('npm run admin -- accounts:set-plan --account <id> --plan 10k');
    await page.goto(`${app.base}/console/settings`);
    const id = ((await page.locator('.dlist-row', { hasText: 'Account id' }).locator('dd code').textContent()) ?? '').trim();
    expect(id).toBe(await accountId());
    await run(process.execPath, [ADMIN, 'accounts:set-plan', '--account', id, '--plan', '10k'], { env: { ...process.env, DATABASE_URL: isolated.url } });

    await page.goto(`${app.base}/console/webhooks/new`);
    await page.getByLabel('Endpoint URL').fill(`http://127.0.0.1:${receiverPort}/webhooks`);
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const fieldError = page.locator('.field-error:not([hidden])').first();
    await fieldError.waitFor();
    expect(await fieldError.textContent()).toContain('url must use https');
    expect(await fieldError.textContent()).toContain(SWITCH);
    await screenshots(page, '20-webhook-form-local-url-refused');
    await app.stop();
    app = undefined;
  }, 90_000);

  it('with the switch as the README says: the console adds the endpoint, the example receiver prints the verified test event', async () => {
    app = await startStandalone(isolated.url, { allowPrivateDestinations: true });
    expect(app.output()).toContain(`!! ${SWITCH}`);
    expect(app.output()).toContain('npm run example:receiver');

    // The session of the first start lives on (same database, cookies are per host).
    await page.goto(`${app.base}/console`);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('link', { name: 'Add endpoint' }).click();
    await page.getByLabel('Endpoint URL').fill(`http://127.0.0.1:${receiverPort}/webhooks`);
    await page.getByLabel('Description').fill('My laptop');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const dialog = page.getByRole('dialog', { name: /signing secret/ });
    await dialog.waitFor();
    const secret = await dialog.locator('input.secret-value').inputValue();
    expect(secret).toMatch(/^whsec_/);

    // `npm run example:receiver -- --secret whsec_… --port 8080` (the built script it runs).
    receiver = spawn(process.execPath, [RECEIVER, '--secret', secret, '--port', String(receiverPort)], { stdio: ['ignore', 'pipe', 'pipe'] });
    receiver.stdout?.on('data', (chunk: Buffer) => (receiverOutput += chunk.toString()));
    receiver.stderr?.on('data', (chunk: Buffer) => (receiverOutput += chunk.toString()));
    await waitFor(() => (receiverOutput.includes('Listening on') ? true : undefined));

    await dialog.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('heading', { name: 'My laptop' }).waitFor();
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.locator('tr[data-event-type="webhook.test"][data-status="succeeded"]').waitFor({ timeout: 30_000 });
    await waitFor(() => (receiverOutput.includes('verified webhook.test') ? true : undefined));
    expect(receiverOutput).toMatch(/verified webhook\.test evt_[0-9a-f-]{36}/);
    expect(receiverOutput).toContain('This is a test event');
    expect(receiverOutput).not.toContain('REFUSED');
    await screenshots(page, '21-webhook-local-receiver-delivered');

    // The list tells http from https.
    await page.goto(`${app.base}/console/webhooks`);
    const row = page.locator('tr[data-webhook]').first();
    await row.waitFor();
    expect(await row.textContent()).toContain(`http://127.0.0.1:${receiverPort}/webhooks`);
    expect(await row.locator('.badge', { hasText: 'HTTP' }).count()).toBe(1);
    await screenshots(page, '22-webhooks-local-receiver');
    expect(problems).toEqual([]);
  }, 120_000);

  async function accountId(): Promise<string> {
    const client = new Client({ connectionString: isolated.url });
    await client.connect();
    try {
      return ((await client.query<{ id: string }>('SELECT id FROM accounts WHERE email = $1', [email])).rows[0]?.id ?? '');
    } finally {
      await client.end();
    }
  }
});

async function waitFor<T>(probe: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
