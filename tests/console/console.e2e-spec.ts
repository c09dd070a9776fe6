import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Ajv2020 from 'ajv/dist/2020';
import { verifyWebhook } from '@cars/signing';
import { createIsolatedDatabase, insertAuctions } from '@cars/testing';
import { createDataSource } from '@cars/persistence';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { rmSync } from 'node:fs';
import { DESKTOP, launchChromium, screenshots, SCREENSHOTS, watchPage } from './support/browser';
import { LoopbackReceiver, startLoopbackReceiver } from './support/receiver';
import { Standalone, startStandalone } from './support/standalone';

const run = promisify(execFile);
const ADMIN = join(__dirname, '..', '..', 'dist', 'tools', 'admin', 'src', 'main.js');

/** Sold Porsche 911s in each of the last 12 months (and two unsold), so the trend has points. */
function marketSeed(): Parameters<typeof insertAuctions>[1] {
  const now = new Date();
  const rows: Parameters<typeof insertAuctions>[1] = [];
  for (let back = 0; back < 12; back += 1) {
    const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1));
    const day = back === 0 ? Math.max(1, Math.min(now.getUTCDate(), 28)) : 15;
    const date = `${month.toISOString().slice(0, 8)}${String(day).padStart(2, '0')}`;
    for (let n = 0; n < 1 + ((back * 5) % 4); n += 1) {
      const price = 90_000 + back * 4_000 + n * 7_500;
      rows.push({ price, auction_end_date: date, auction_end_at: `${date}T18:00:00Z`, year: 1966 + (n % 6) });
    }
  }
  // A sale under $10,000: the range tile must still use one money format for both ends.
  rows.push({ price: 9_900, auction_end_date: rows[0]!.auction_end_date, auction_end_at: `${rows[0]!.auction_end_date}T18:00:00Z`, year: 1970 });
  rows.push({ auction_status: 'reserve not met', source_status: 'reserve not met', price: 80_000, auction_end_date: rows[0]!.auction_end_date });
  rows.push({ auction_status: 'reserve not met', source_status: 'reserve not met', price: 85_000, auction_end_date: rows[1]!.auction_end_date });
  return rows;
}

/**
 * The account console in real headless Chromium against the quick start (one process: gateway,
 * services, delivery worker): sign-up → verification link from the log → an operator's paid plan →
 * an API key that works as a bearer → a webhook to a loopback receiver → a test delivery seen
 * succeeding → secret rotation → the price-trend chart; and the failure paths. Every page is
 * photographed at desktop and phone width into artifacts/screenshots/.
 */
describe('account console (browser)', () => {
  let isolated: { url: string; drop: () => Promise<void> };
  let db: DataSource;
  let app: Standalone;
  let receiver: LoopbackReceiver;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let problems: string[];

  const email = `console-${randomUUID().slice(0, 8)}@example.test`;
  const password = 'a long enough passphrase';
  let apiKey = '';
  let firstSecret = '';

  const at = (path: string) => `${app.base}/console${path}`;
  const text = async (selector: string) => ((await page.locator(selector).first().textContent()) ?? '').trim();
  /** The verification link written to the log after `count` earlier ones. */
  const nextLink = async (count: number): Promise<string> => {
    const deadline = Date.now() + 10_000;
    while (app.verificationLinks(email).length <= count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const links = app.verificationLinks(email);
    if (links.length <= count) throw new Error(`no verification link in the log:\n${app.output().slice(-2000)}`);
    return links[links.length - 1]!;
  };

  beforeAll(async () => {
    rmSync(SCREENSHOTS, { recursive: true, force: true }); // this run's pictures only
    isolated = await createIsolatedDatabase('console_browser');
    db = await createDataSource({ url: isolated.url, poolSize: 2, applicationName: 'console-spec' }).initialize();
    receiver = await startLoopbackReceiver();
    app = await startStandalone(isolated.url);
    // The app has loaded the reference catalog (makes, models, sources); the sales reference it.
    await insertAuctions(db, marketSeed());
    browser = await launchChromium();
    context = await browser.newContext({ viewport: DESKTOP, locale: 'en-US', timezoneId: 'UTC' });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    problems = watchPage(page);
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await app?.stop();
    await receiver?.close();
    await db?.destroy();
    await isolated?.drop();
  }, 60_000);

  it('serves the console with a strict CSP, hashed assets and an SPA fallback, outside the OpenAPI document', async () => {
    const index = await fetch(at('/webhooks/whatever'));
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(index.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await index.text();
    expect(html).not.toMatch(/<script>|<style|\sstyle="|\son\w+="/);
    const script = /src="(\/console\/assets\/app-[A-Z0-9]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${app.base}${script}`);
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetch(at('/assets/missing-ABCDEFGH.js'))).status).toBe(404);
    const openapi = (await (await fetch(`${app.base}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(openapi.paths).filter((path) => path.startsWith('/console'))).toEqual([]);
  });

  it('signs up: a new account is on the Free plan and unverified; the verification link is in the log', async () => {
    await page.goto(at('/signup'));
    await page.getByLabel('Email address').waitFor();
    await screenshots(page, '01-sign-up');
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    expect(await text('.field-error:not([hidden])')).toContain('10 to 200 characters');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await page.locator('[data-testid="verify-banner"]').waitFor();
    await page.locator('.meter').waitFor();
    expect(await text('.plan-name')).toBe('Free plan');
    await nextLink(0);
    // No email server: the console says the link is in the log, not that it was sent, and no toast hides the first steps.
    expect(await text('[data-testid="verify-banner"]')).toContain("in the server's log");
    expect(await page.locator('.toast').count()).toBe(0);
    // Emails (banner, plan card) wrap before the @ only, never inside a part.
    await page.setViewportSize({ width: 390, height: 844 });
    const parts = await page.locator('.email-part').evaluateAll((nodes) => nodes.map((n) => (n as unknown as { getClientRects(): { length: number } }).getClientRects().length));
    expect(parts.length).toBeGreaterThanOrEqual(2); // banner and plan card: local part and @domain each
    expect(parts.filter((lines) => lines !== 1)).toEqual([]);
    await page.setViewportSize(DESKTOP);
    await screenshots(page, '02-overview-unverified');
  }, 60_000);

  it('free plan: creating a webhook shows the plan rule in words', async () => {
    await page.goto(at('/webhooks'));
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    await page.locator('.empty').waitFor();
    await screenshots(page, '03-webhooks-free-plan');
    // "Add endpoint" is a disabled button that points at the plan notice.
    const add = page.getByRole('button', { name: 'Add endpoint' });
    expect(await add.isDisabled()).toBe(true);
    expect(await add.getAttribute('aria-describedby')).toBe('webhooks-plan-notice');
    expect(await text('#webhooks-plan-notice')).toContain('Webhooks come with paid plans');
    // The server refuses too, in words (the form reached by its address).
    await page.goto(at('/webhooks/new'));
    await page.getByLabel('Endpoint URL').fill(receiver.url('/free'));
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const banner = page.locator('.form-banner .alert');
    await banner.waitFor();
    const message = (await banner.textContent()) ?? '';
    expect(message).toContain('Not included in your plan');
    expect(message).toMatch(/1K, 10K or 100K/);
    expect(message).not.toMatch(/\b403\b|Forbidden/);
    await screenshots(page, '04-webhook-create-free-plan');
  }, 60_000);

  it('an expired verification link says so; a fresh one verifies the address', async () => {
    const first = await nextLink(0);
    await db.query(
      `UPDATE email_verification_tokens SET expires_at = now() - interval '1 minute'
       WHERE account_id = (SELECT id FROM accounts WHERE email = $1)`,
      [email],
    );
    await page.goto(first);
    await page.locator('[data-state="failed"]').waitFor();
    expect(await text('[data-state="failed"]')).toContain('expired');
    expect(new URL(page.url()).search).toBe(''); // the token leaves the address bar
    await screenshots(page, '05-verify-expired');

    await page.goto(at(''));
    await page.getByRole('button', { name: 'Resend the link' }).click();
    await page.locator('.toast', { hasText: 'New link written to the server log' }).waitFor();
    const fresh = await nextLink(1);
    expect(fresh).not.toBe(first);
    await page.goto(fresh);
    await page.locator('[data-state="verified"]').waitFor();
    await screenshots(page, '06-verify-success');
    await page.getByRole('link', { name: 'Go to the overview' }).click();
    await page.locator('.badge', { hasText: 'Verified' }).first().waitFor();
    expect(await page.locator('[data-testid="verify-banner"]').count()).toBe(0);
  }, 60_000);

  it('an operator moves the account to the 10K plan (admin CLI)', async () => {
    const [{ id }] = (await db.query(`SELECT id FROM accounts WHERE email = $1`, [email])) as { id: string }[];
    await run(process.execPath, [ADMIN, 'accounts:set-plan', '--account', id!, '--plan', '10k'], {
      env: { ...process.env, DATABASE_URL: isolated.url },
    });
    await page.goto(at(''));
    await page.locator('.plan-name', { hasText: '10K plan' }).waitFor();
    await screenshots(page, '07-overview-paid');
  }, 60_000);

  it('creates an API key, shown once with a copy button; it works as a bearer on /auctions', async () => {
    await page.goto(at('/keys'));
    await page.locator('.empty').waitFor();
    await page.getByRole('button', { name: 'Create API key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Your new API key' });
    await dialog.waitFor();
    apiKey = await dialog.locator('input.secret-value').inputValue();
    expect(apiKey).toMatch(/^cca_live_[0-9A-Za-z]{32}$/);
    expect(await dialog.getByRole('button', { name: 'Copy API key' }).isVisible()).toBe(true);
    await screenshots(page, '08-api-key-created', { dialog: true });
    await dialog.getByRole('button', { name: 'I have stored it' }).click();
    const row = page.locator('tr[data-state="active"]');
    await row.waitFor();
    expect(apiKey.startsWith((await row.getAttribute('data-prefix')) ?? '-')).toBe(true);
    expect(await page.content()).not.toContain(apiKey); // listed by prefix only

    const auctions = await fetch(`${app.base}/auctions?make=Porsche&limit=1`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(auctions.status).toBe(200);
    // The session cookie never authorizes the data API.
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    expect((await fetch(`${app.base}/auctions?limit=1`, { headers: { cookie } })).status).toBe(401);
    await page.reload();
    await page.locator('tr[data-state="active"]').waitFor();
    await screenshots(page, '09-api-keys');
  }, 60_000);

  it('creates a webhook to a loopback receiver with filters from the pickers; the secret is shown once', async () => {
    await page.goto(at('/webhooks/new'));
    await page.locator('select[name="make"] option[value="Porsche"]').waitFor({ state: 'attached' });
    await page.getByLabel('Endpoint URL').fill(receiver.url('/cars'));
    await page.getByLabel('Description').fill('Porsche results for the pricing desk');
    await page.getByLabel('bid.created').check();
    await page.getByLabel('Make').selectOption('Porsche');
    await page.getByLabel('Auction platform').selectOption('bringatrailer');
    // Every event's checkbox is the same size, and each type shows its sample payload.
    const boxes = await page.locator('.check-card input').evaluateAll((nodes) =>
      nodes.map((n) => {
        const r = (n as unknown as { getBoundingClientRect(): { width: number; height: number } }).getBoundingClientRect();
        return `${r.width}x${r.height}`;
      }),
    );
    expect(new Set(boxes).size).toBe(1);
    for (const type of ['auction.created', 'auction.updated', 'auction.ended', 'bid.created']) {
      expect(await page.locator(`details[data-sample="${type}"] pre`).textContent()).toContain(`"type": "${type}"`);
    }
    await page.locator('details[data-sample="auction.ended"] summary').click();
    expect(await page.locator('details[data-sample="auction.ended"] pre').textContent()).toContain('"id": "48213"');
    await screenshots(page, '10-webhook-form');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const dialog = page.getByRole('dialog', { name: /signing secret/ });
    await dialog.waitFor();
    firstSecret = await dialog.locator('input.secret-value').inputValue();
    expect(firstSecret).toMatch(/^whsec_/);
    await screenshots(page, '11-webhook-secret', { dialog: true });
    await dialog.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('heading', { name: 'Porsche results for the pricing desk' }).waitFor();
    expect(await text('.health')).toBe('Active');
  }, 60_000);

  it('sends a test event and shows the delivery succeeding, with its payload', async () => {
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.locator('.toast', { hasText: 'Test event queued' }).waitFor();
    const row = page.locator('tr[data-event-type="webhook.test"][data-status="succeeded"]');
    await row.waitFor({ timeout: 30_000 });
    expect(await row.textContent()).toContain('HTTP 200');
    const delivered = receiver.received.find((r) => r.body.includes('webhook.test'));
    expect(delivered).toBeDefined();
    expect(verifyWebhook(firstSecret, delivered!.body, delivered!.headers)).toMatchObject({ type: 'webhook.test' });
    // What was delivered is what the event catalog's schema describes.
    const validate = new Ajv2020({ strict: true }).compile((await (await fetch(`${app.base}/schemas/events.json`)).json()) as object);
    expect({ valid: validate(JSON.parse(delivered!.body)), errors: validate.errors ?? null }).toEqual({ valid: true, errors: null });
    await screenshots(page, '12-webhook-deliveries');

    await row.getByRole('button', { name: /View delivery/ }).click();
    const dialog = page.getByRole('dialog', { name: 'webhook.test delivery' });
    await dialog.waitFor();
    expect(await dialog.locator('[data-payload]').textContent()).toContain('"type": "webhook.test"');
    await screenshots(page, '13-delivery-payload', { dialog: true });
    await dialog.getByRole('button', { name: 'Close' }).first().click();
  }, 60_000);

  it('a second test within the minute is refused in words; rotating shows the new secret once', async () => {
    await page.getByRole('button', { name: 'Send test event' }).click();
    const refusal = page.locator('.toast-error');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('Test already sent');
    expect(await refusal.textContent()).not.toMatch(/\b409\b|Conflict/);
    await refusal.getByRole('button', { name: 'Dismiss notification' }).click();

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog', { name: 'Rotate the signing secret?' }).getByRole('button', { name: 'Rotate secret' }).click();
    const dialog = page.getByRole('dialog', { name: 'Your new signing secret' });
    await dialog.waitFor();
    const secret = await dialog.locator('input.secret-value').inputValue();
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(firstSecret);
    await dialog.getByRole('button', { name: 'I have stored it' }).click();
    await page.locator('.toast', { hasText: 'Secret rotated' }).waitFor();

    await page.goto(at('/webhooks'));
    await page.locator('tr[data-webhook]').waitFor();
    expect(['Healthy', 'Active']).toContain(await text('tr[data-webhook] .health'));
  }, 60_000);

  it('a failing endpoint: the failure shows with its response; retry and recover answer in words', async () => {
    await page.goto(at('/webhooks/new'));
    await page.getByLabel('Endpoint URL').fill(receiver.url('/down'));
    await page.getByLabel('Description').fill('Staging receiver');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await page.getByRole('dialog', { name: /signing secret/ }).getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('heading', { name: 'Staging receiver' }).waitFor();
    await page.getByRole('button', { name: 'Send test event' }).click();
    const row = page.locator('tr[data-event-type="webhook.test"][data-status="pending"]', { hasText: 'HTTP 500' });
    await row.waitFor({ timeout: 30_000 });
    // The endpoint's health comes with the next poll of the endpoint (deliveries and endpoint are fetched side by side).
    await page.locator('.health', { hasText: 'Failing' }).first().waitFor({ timeout: 10_000 });
    expect(await text('.health')).toBe('Failing');
    await screenshots(page, '14-webhook-failing');

    await row.getByRole('button', { name: /Retry delivery/ }).click();
    await page.locator('.toast', { hasText: 'Retry queued' }).waitFor();
    await page.getByRole('button', { name: 'Recover deliveries' }).click();
    await page.locator('.toast', { hasText: 'Recovery' }).waitFor();

    await page.goto(at('/webhooks'));
    await page.locator('tr[data-webhook] [data-health="failing"]').waitFor();
    await screenshots(page, '14-webhooks');
  }, 60_000);

  it('draws the 12-month price trend with uPlot, from a counted /stats request', async () => {
    const usedBefore = await settledUsedUnits();
    await page.goto(at('/market'));
    await page.locator('select[name="make"] option[value="Porsche"]').waitFor({ state: 'attached' });
    expect(await text('.counted-note')).toContain('counts as one /stats request');
    await page.getByLabel('Make').selectOption('Porsche');
    await page.locator('select[name="model"] option[value="911"]').waitFor({ state: 'attached' });
    await page.getByLabel('Model').selectOption('911');
    await page.getByRole('button', { name: 'Show price trend' }).click();
    const chart = page.locator('figure.chart');
    await chart.waitFor();
    await chart.locator('canvas').waitFor();
    expect(Number(await chart.getAttribute('data-points'))).toBeGreaterThan(0);
    expect(Number(await chart.getAttribute('data-points'))).toBe(12);
    expect(await text('.stat:has-text("Sales") .stat-value')).toBe(String(marketSeed().length - 2));
    // One money format for both ends of the range.
    expect(await text('.stat:has-text("Range") .stat-value')).toMatch(/^\$\d+(\.\d)?K – \$\d+(\.\d)?K$/);
    // Without hovering, the legend shows the latest month's figures, not dashes.
    const legend = await chart.locator('.u-legend').textContent();
    expect(legend).toMatch(/Average price:?\s*\$[\d,]+/);
    expect(legend).toMatch(/Sales:?\s*\d+/);
    expect(legend).not.toContain('—');
    await screenshots(page, '15-market');
    expect(await settledUsedUnits()).toBe(usedBefore + 1);
  }, 60_000);

  it('settings: changes the password, signs out, and the wrong password is refused in words', async () => {
    await page.goto(at('/settings'));
    await page.getByLabel('Current password').waitFor();
    await screenshots(page, '16-settings');
    await page.getByLabel('Current password').fill('not the password');
    await page.getByLabel('New password', { exact: true }).fill('another long passphrase');
    await page.getByLabel('Confirm new password').fill('another long passphrase');
    await page.getByRole('button', { name: 'Change password' }).click();
    expect(await page.locator('.field-error:not([hidden])').first().textContent()).toContain('not your current password');
    await page.getByLabel('Current password').fill(password);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.locator('.toast', { hasText: 'Password changed' }).waitFor();

    await page.locator('main').getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await screenshots(page, '17-sign-in');
    await page.getByLabel('Email address').fill(email);
    await page.getByLabel('Password').fill(password); // the old one
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('.form-banner .alert').waitFor();
    expect(await text('.form-banner .alert')).toContain('Incorrect email or password');
    await screenshots(page, '18-sign-in-wrong-password');
    // By keyboard alone: the password field follows the email field, Enter submits.
    await page.getByLabel('Email address').focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement && document.activeElement.name')).toBe('password');
    await page.keyboard.type('another long passphrase');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  }, 60_000);

  it('the overview shows what counted: requests and deliveries against the allowance', async () => {
    await page.goto(at(''));
    await page.locator('.meter').waitFor();
    // GET /auctions with the key and the Market view's /stats; the test delivery was free.
    expect(Number(await page.locator('.meter').getAttribute('data-used'))).toBe(2);
    expect(await text('.legend')).toMatch(/API requests\s*2/);
    // The period's daily usage as a uPlot chart: every day so far, today's two requests in it.
    const chart = page.locator('[data-testid="usage-chart"]');
    await chart.locator('canvas').waitFor();
    expect(Number(await chart.getAttribute('data-days'))).toBe(new Date().getUTCDate());
    expect(Number(await chart.getAttribute('data-total'))).toBe(2);
    // Without a cursor the legend reads today's figures.
    expect(await chart.locator('.u-legend').textContent()).toMatch(/Webhook deliveries:?\s*0.*API requests:?\s*2/);
    const box = await chart.locator('canvas').boundingBox();
    expect(box!.width).toBeGreaterThan(400);
    expect(await chart.locator('.visually-hidden').textContent()).toMatch(/2 requests, 0 deliveries/);
    await screenshots(page, '19-overview-in-use');
  }, 30_000);

  it('phone width: the navigation is a menu button with a drawer', async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    const menu = page.locator('button[aria-controls="sidebar"]');
    expect(await menu.getAttribute('aria-label')).toBe('Open navigation');
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    expect(await menu.getAttribute('aria-label')).toBe('Close navigation');
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    await page.setViewportSize(DESKTOP);
  }, 30_000);

  it('a paid plan that has lapsed shows as the Free plan it now is (sidebar, webhooks, market)', async () => {
    await db.query(`UPDATE accounts SET plan_expires_at = now() - interval '1 minute' WHERE email = $1`, [email]);
    await page.goto(at('/webhooks'));
    await page.locator('.sidebar-account-text', { hasText: 'Free plan' }).waitFor();
    await page.getByText('Webhooks come with paid plans').waitFor();
    await page.goto(at('/market'));
    await page.getByText('Pricing statistics come with paid plans').waitFor();
    await page.goto(at(''));
    await page.locator('.plan-name', { hasText: 'Free plan' }).waitFor();
    await db.query(`UPDATE accounts SET plan_expires_at = NULL WHERE email = $1`, [email]);
  }, 30_000);

  it('no page raised a script error or a Content-Security-Policy violation', () => {
    expect(problems).toEqual([]);
  });

  /**
   * The account's counted units once every spent unit has reached the ledger's `used`. The
   * gateway settles a lease's spent units at least once a second (in a batch every 250 ms), and a
   * lease may hold units ahead in `reserved`, so `used` unchanged over 2.5 s is the settled count.
   */
  async function settledUsedUnits(): Promise<number> {
    const read = async () => {
      const rows = (await db.query(
        `SELECT coalesce(sum(used), 0)::int AS used FROM usage_ledger WHERE account_id = (SELECT id FROM accounts WHERE email = $1)`,
        [email],
      )) as { used: number }[];
      return rows[0]?.used ?? 0;
    };
    let last = await read();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const now = await read();
      if (now === last) return now;
      last = now;
    }
  }
});
