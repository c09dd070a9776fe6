import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { openTestDataSource } from '@cars/testing';
import { DataSource } from 'typeorm';
import { AccessProbeModule } from './support/access-probe.module';
import { settledUsage } from './support/accounts';
import { bearer, request } from './support/http';
import { startTestStack, TestStack } from './support/stack';

const run = promisify(execFile);
const ADMIN = join(__dirname, '../../dist/tools/admin/src/main.js');

interface CliResult {
  code: number;
  json: Record<string, unknown> | null;
  stderr: string;
}

/** The operator CLI (docs/operations.md), compiled as `npm run admin` runs it, against the run's database. */
async function admin(...args: string[]): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [ADMIN, ...args], { env: { ...process.env } });
    return { code: 0, json: JSON.parse(stdout) as Record<string, unknown>, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, json: null, stderr: e.stderr };
  }
}

describe('admin CLI: accounts, plans, usage and keys, seen through the gateway', () => {
  let stack: TestStack;
  let db: DataSource;

  beforeAll(async () => {
    db = await openTestDataSource();
    // The gateway's own defaults (API_KEY_CACHE_TTL_MS 10 s), without Redis.
    stack = await startTestStack({ services: [], gatewayImports: [AccessProbeModule], access: { redisUrl: undefined } });
  });

  afterAll(async () => {
    await stack?.close();
    await db?.destroy();
  });

  const email = () => `cli-${randomUUID()}@example.test`;
  const get = (path: string, apiKey: string) => request(`${stack.url}${path}`, bearer(apiKey));

  it('creates an account and prints {account_id, api_key}; the key works at once', async () => {
    const created = await admin('accounts:create', '--email', email(), '--plan', '1k', '--verified');
    expect(created.code).toBe(0);
    expect(Object.keys(created.json!).sort()).toEqual(['account_id', 'api_key']);
    expect(created.json!.api_key).toMatch(/^cca_live_[0-9A-Za-z]{32}$/);
    const res = await get('/probe-access/paid', created.json!.api_key as string);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
    const stored: { key_hash: string; prefix: string }[] = await db.query(`SELECT key_hash, prefix FROM api_keys WHERE account_id = $1`, [
      created.json!.account_id,
    ]);
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(created.json!.api_key as string);
    expect((created.json!.api_key as string).startsWith(stored[0].prefix)).toBe(true);
  }, 30_000);

  it('sets plans with expiry, verifies email, sets usage — and the gateway enforces it', async () => {
    const created = await admin('accounts:create', '--email', email(), '--plan', 'free');
    const accountId = created.json!.account_id as string;
    const apiKey = created.json!.api_key as string;

    const plan = await admin('accounts:set-plan', '--account', accountId, '--plan', '10k', '--expires-at', '2099-01-01T00:00:00Z');
    expect(plan.code).toBe(0);
    expect(plan.json).toMatchObject({ account_id: accountId, plan: '10k', plan_expires_at: '2099-01-01T00:00:00.000Z' });
    // The account as the API shows it (accountJson), its id under the documented name account_id.
    expect(Object.keys(plan.json!)).toEqual(['account_id', 'email', 'email_verified', 'plan', 'plan_expires_at', 'created_at']);

    const verified = await admin('accounts:verify-email', '--account', accountId);
    expect(verified.json).toMatchObject({ account_id: accountId, email_verified: true });

    const usage = await admin('usage:set', '--account', accountId, '--used', '10000');
    expect(usage.json).toMatchObject({ account_id: accountId, used: 10000, reserved: 0 });
    expect((await get('/probe-access/counted', apiKey)).status).toBe(429);
    expect(await settledUsage(db, accountId)).toEqual({ used: 10000, reserved: 0 });

    const shown = await admin('accounts:show', '--account', accountId);
    expect(shown.json).toMatchObject({ plan: '10k', effective_plan: '10k', usage: { used: 10000, limit: 10000 } });
  }, 30_000);

  it('creates a second key and revokes the first by prefix; the gateway stops accepting it within 30 s', async () => {
    const created = await admin('accounts:create', '--email', email(), '--plan', '100k');
    const accountId = created.json!.account_id as string;
    const first = created.json!.api_key as string;
    const second = await admin('keys:create', '--account', accountId);
    expect(second.json).toMatchObject({ account_id: accountId, key_prefix: expect.stringMatching(/^cca_live_.{7}$/) });
    const secondKey = second.json!.api_key as string;

    expect((await get('/probe-access/open', first)).status).toBe(200);
    const revoked = await admin('keys:revoke', '--key-prefix', first.slice(0, 16));
    expect(revoked.code).toBe(0);
    expect(revoked.json).toMatchObject({ key_prefix: first.slice(0, 16), account_id: accountId });
    const revokedAt = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - revokedAt < 30_000) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      status = (await get('/probe-access/open', first)).status;
    }
    expect(status).toBe(401);
    // The default key cache TTL is 10 s (plus polling and request latency).
    expect(Date.now() - revokedAt).toBeLessThan(12_000);
    expect((await get('/probe-access/open', secondKey)).status).toBe(200);
  }, 40_000);

  it('fails clearly, with a non-zero exit, on bad input and unknown accounts or keys', async () => {
    const cases: [string[], number, RegExp][] = [
      [['accounts:create', '--email', email(), '--plan', 'gold'], 2, /plan must be one of free, 1k, 10k, 100k/],
      [['accounts:create', '--email', 'not-an-email', '--plan', '1k'], 2, /is not an email address/],
      [['accounts:create', '--plan', '1k'], 2, /--email is required/],
      [['accounts:set-plan', '--account', randomUUID(), '--plan', '1k'], 1, /no account with id/],
      [['accounts:set-plan', '--account', 'abc', '--plan', '1k'], 2, /account id must be a UUID/],
      [['accounts:set-plan', '--account', randomUUID(), '--plan', '1k', '--expires-at', 'soon'], 2, /--expires-at must be/],
      [['accounts:verify-email', '--account', randomUUID()], 1, /no account with id/],
      [['usage:set', '--account', randomUUID(), '--used', '5'], 1, /no account with id/],
      [['usage:set', '--account', randomUUID(), '--used', 'many'], 2, /--used must be a non-negative integer/],
      [['keys:create', '--account', randomUUID()], 1, /no account with id/],
      [['keys:revoke', '--key-prefix', 'cca_live_nothere'], 1, /no API key with prefix/],
    ];
    for (const [args, code, message] of cases) {
      const result = await admin(...args);
      expect({ args, code: result.code }).toEqual({ args, code });
      expect(result.stderr).toMatch(message);
    }
    const address = email();
    expect((await admin('accounts:create', '--email', address, '--plan', '1k')).code).toBe(0);
    const duplicate = await admin('accounts:create', '--email', address.toUpperCase(), '--plan', '1k');
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toMatch(/already exists/);
  }, 60_000);
});
