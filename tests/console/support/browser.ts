import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, chromium, Page } from 'playwright-core';

/** Debian's chromium package (`.ci/run` installs it): nothing downloads a browser at run time. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** Git-ignored; the README points here. */
export const SCREENSHOTS = join(__dirname, '..', '..', '..', 'artifacts', 'screenshots');

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`No Chromium at ${CHROMIUM}: install Debian's package (apt-get install -y chromium) or set CHROMIUM_PATH`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
  });
}

/**
 * What went wrong in the page: uncaught errors and Content-Security-Policy violations (a failed
 * fetch's "Failed to load resource" line is an answer the page handles, not a problem).
 */
export function watchPage(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    const text = message.text();
    if (message.type() === 'error' && !/Failed to load resource/.test(text)) problems.push(`console: ${text}`);
    if (/Content Security Policy/i.test(text)) problems.push(`csp: ${text}`);
  });
  return problems;
}

/**
 * Screenshots of the page as it is, at desktop and at phone width
 * (`artifacts/screenshots/<name>-desktop.png`, `-phone.png`): the whole page from the top, or —
 * with a dialog open — the viewport the dialog sits in. Toasts are dismissed first so they hide
 * nothing. The viewport goes back to desktop.
 */
export async function screenshots(page: Page, name: string, options: { dialog?: boolean } = {}): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.evaluate("document.querySelectorAll('.toast').forEach((toast) => toast.remove())");
  for (const [viewport, suffix] of [[DESKTOP, 'desktop'], [PHONE, 'phone']] as const) {
    await page.setViewportSize(viewport);
    if (!options.dialog) await page.evaluate('window.scrollTo(0, 0)');
    await settle(page);
    await page.screenshot({ path: join(SCREENSHOTS, `${name}-${suffix}.png`), fullPage: !options.dialog });
  }
  await page.setViewportSize(DESKTOP);
  await settle(page);
}

/** Lets layout, the chart's resize observer and CSS transitions finish. */
async function settle(page: Page): Promise<void> {
  // A string: the spec's TypeScript has no DOM types (it runs in Node).
  await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
  await page.waitForTimeout(250);
}
