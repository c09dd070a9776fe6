import 'reflect-metadata';
import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { REDACTED_PATHS } from '@cars/runtime';
import { openTestDataSource, TEST_RABBITMQ_BASE_URL } from '@cars/testing';
import pino from 'pino';
import { DataSource } from 'typeorm';
import { createTestAccount, TestAccount } from './support/accounts';
import { bearer, request } from './support/http';

const GATEWAY = join(__dirname, '../../dist/apps/gateway/src/main.js');

/**
 * The Authorization header never reaches a log line: the real gateway app (compiled, as
 * deployed), at LOG_LEVEL=trace, with Redis and every service unreachable, so that keyed
 * requests fail and are logged.
 */
describe('logs never contain the Authorization header', () => {
  let db: DataSource;
  let account: TestAccount;
  let gateway: ChildProcess;
  let output = '';
  let baseUrl = '';

  beforeAll(async () => {
    db = await openTestDataSource();
    account = await createTestAccount(db, { plan: '1k' });
    gateway = spawn(process.execPath, [GATEWAY], {
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        HEALTH_PORT: '0',
        LOG_LEVEL: 'trace',
        REDIS_URL: 'redis://127.0.0.1:1',
        // No service can answer: every routed request fails with 503, which the gateway logs.
        RABBITMQ_URL: `${TEST_RABBITMQ_BASE_URL}/cars_test_no_such_vhost`,
        RPC_TIMEOUT_MS: '200',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (chunk: Buffer) => {
      output += chunk.toString('utf8');
    };
    gateway.stdout!.on('data', collect);
    gateway.stderr!.on('data', collect);
    const started = Date.now();
    while (!baseUrl && Date.now() - started < 20_000) {
      baseUrl = /listening on (http:\/\/[^"\s]+)/.exec(output)?.[1] ?? '';
      if (!baseUrl) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    if (!baseUrl) throw new Error(`gateway did not start:\n${output}`);
  }, 30_000);

  afterAll(async () => {
    if (gateway && gateway.exitCode === null) {
      const exited = new Promise((resolve) => gateway.once('exit', resolve));
      gateway.kill('SIGTERM');
      await exited;
    }
    await db?.destroy();
  });

  it('logs the requests’ failures but not the key', async () => {
    const responses = [
      await request(`${baseUrl}/makes`, bearer(account.apiKey)),
      await request(`${baseUrl}/auctions?make=Porsche`, bearer(account.apiKey)),
      await request(`${baseUrl}/stats?make=Porsche`, bearer(account.apiKey)),
      await request(`${baseUrl}/no-such-route`, bearer(account.apiKey)),
      await request(`${baseUrl}/auctions`, bearer(`cca_live_${'x'.repeat(32)}`)),
      await request(`${baseUrl}/auctions`, { headers: { authorization: `Basic ${account.apiKey}` } }),
      await request(`${baseUrl}/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
        body: '{not json',
      }),
    ];
    expect(responses.map((r) => r.status)).toEqual([503, 503, 503, 404, 401, 401, 400]);
    // One more keyed request whose 503 is logged: the gateway writes its lines in order, so once
    // this second `GET /makes` line has reached the pipe, every line of the requests above has too.
    expect((await request(`${baseUrl}/makes`, bearer(account.apiKey))).status).toBe(503);
    await until(() => (output.match(/GET \/makes → 503/g) ?? []).length === 2, 10_000, () => `the second GET /makes line in:\n${output.slice(-4000)}`);

    // The failures of these keyed requests were logged (and Redis being down).
    expect(output).toMatch(/GET \/auctions → 503/);
    expect(output).toMatch(/GET \/stats → 503/);
    expect(output).toMatch(/Redis unavailable/);
    expect(output).not.toContain(account.apiKey);
    expect(output).not.toContain(account.apiKey.slice(9));
    expect(output).not.toContain(account.keyPrefix);
    expect(output).not.toMatch(/Bearer /i);
    expect(output).not.toMatch(/"authorization":"(?!\[redacted\])/i);
  });
});

/** Polls `done` until it holds, or fails after `timeoutMs`. */
async function until(done: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('logger redaction', () => {
  it('censors the Authorization header wherever a request object is logged', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = pino({ redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, sink);
    const authorization = 'Bearer cca_live_abcdefghijklmnopqrstuvwxyz012345';
    logger.info({ req: { headers: { authorization } } }, 'request');
    logger.info({ request: { headers: { authorization } } }, 'request');
    logger.info({ headers: { authorization } }, 'headers');
    logger.warn({ authorization, apiKey: 'cca_live_x', api_key: 'cca_live_y' }, 'flat');
    expect(lines).toHaveLength(4);
    expect(lines.join('\n')).not.toMatch(/cca_live_/);
    const [reqLine, requestLine, headersLine, flatLine] = lines.map((line) => JSON.parse(line));
    expect(reqLine.req).toEqual({ headers: { authorization: '[redacted]' } });
    expect(requestLine.request).toEqual({ headers: { authorization: '[redacted]' } });
    expect(headersLine.headers).toEqual({ authorization: '[redacted]' });
    expect(flatLine).toMatchObject({ authorization: '[redacted]', apiKey: '[redacted]', api_key: '[redacted]' });
  });
});
