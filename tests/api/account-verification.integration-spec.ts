import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Queues } from '@cars/contracts';
import { QueryModule } from '@cars/service-query';
import { loadAccountAreaConfig } from '@cars/service-gateway';
import { openTestDataSource } from '@cars/testing';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import {
  accountAreaModule,
  CapturingLogger,
  ConsoleClient,
  OpenApiConformance,
  startAccountGateway,
  startMailCapture,
  verificationTokenIn,
} from './support/account-area';
import { startTestStack, TestStack } from './support/stack';

jest.setTimeout(60_000);

const email = () => `verify-${randomUUID()}@example.test`;

/**
 * Email verification: single-use, expiring links, sent over SMTP (nodemailer, to an smtp-server in
 * this process) when SMTP_URL is set and written to the log otherwise; resend once a minute.
 */
describe('account area: email verification', () => {
  let stack: TestStack;
  let db: DataSource;
  let conformance: OpenApiConformance;
  let mail: Awaited<ReturnType<typeof startMailCapture>>;
  let logged: { url: string; gateway: NestFastifyApplication };
  const log = new CapturingLogger();
  let client: () => ConsoleClient;

  beforeAll(async () => {
    db = await openTestDataSource();
    mail = await startMailCapture();
    stack = await startTestStack({
      services: [{ queue: Queues.QueryRpc, module: QueryModule }],
      gatewayImports: [accountAreaModule({ smtpUrl: mail.url, mailFrom: 'Cars <no-reply@cars.example.test>', publicBaseUrl: 'https://cars.example.test' })],
    });
    // It trusts the spec's own address as a proxy: even then no X-Forwarded-Host reaches a link.
    logged = await startAccountGateway({ logger: log, trustedProxies: ['127.0.0.1/32'] });
    conformance = await OpenApiConformance.load(stack.url);
    client = () => new ConsoleClient(stack.url, conformance);
  });

  afterAll(async () => {
    await logged?.gateway.close();
    await stack?.close();
    await mail?.close();
    await db?.destroy();
  });

  const tokenFor = async (address: string) => {
    const message = await mail.waitFor(address);
    const token = verificationTokenIn(message.raw);
    expect(token).not.toBeNull();
    return token!;
  };

  it('mails a link to PUBLIC_BASE_URL/console/verify over SMTP, with the token stored only hashed', async () => {
    const address = email();
    const res = await client().signUp(address);
    expect(res.status).toBe(201);
    // The console says where the link went.
    expect(res.body).toMatchObject({ verification_email: 'sent', verification_email_via: 'email' });
    const message = await mail.waitFor(address);
    expect(message.from).toBe('no-reply@cars.example.test');
    expect(message.raw).toMatch(/Subject: Verify your email address/);
    expect(message.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=')).toMatch(/https:\/\/cars\.example\.test\/console\/verify\?token=[A-Za-z0-9_-]{43}/);
    const token = verificationTokenIn(message.raw)!;
    const [row] = await db.query(`SELECT token_hash, expires_at - created_at AS ttl FROM email_verification_tokens WHERE account_id = $1`, [res.body.account.id]);
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.token_hash).not.toContain(token);
    expect(row.ttl.hours ?? row.ttl.days * 24).toBe(24);
  });

  it('points the link at PUBLIC_BASE_URL whatever Host and X-Forwarded-Host/-Proto say', async () => {
    const address = email();
    const res = await client().post('/account/signup', { email: address, password: 'correct horse battery staple' }, {
      headers: { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
    });
    expect(res.status).toBe(201);
    const raw = (await mail.waitFor(address)).raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
    expect(raw).toMatch(/https:\/\/cars\.example\.test\/console\/verify\?token=/);
    expect(raw).not.toContain('evil.example');
  });

  it('verifies once, without a session (another browser); a second use is 400 "already used"', async () => {
    const address = email();
    const browser = client();
    await browser.signUp(address);
    const token = await tokenFor(address);
    const elsewhere = client();
    const ok = await elsewhere.post('/account/verify-email', { token });
    expect(ok.status).toBe(200);
    expect(ok.body.account).toMatchObject({ email: address, email_verified: true });
    expect((await browser.get('/account/session')).body.account.email_verified).toBe(true);
    const again = await elsewhere.post('/account/verify-email', { token });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('Bad Request');
    expect(again.body.message).toMatch(/already used/);
  });

  it('refuses an expired link with a message that says so, and an unknown one', async () => {
    const address = email();
    const res = await client().signUp(address);
    const token = await tokenFor(address);
    await db.query(`UPDATE email_verification_tokens SET expires_at = now() - interval '1 second' WHERE account_id = $1`, [res.body.account.id]);
    const expired = await client().post('/account/verify-email', { token });
    expect(expired.status).toBe(400);
    expect(expired.body).toEqual({ error: 'Bad Request', message: expect.stringMatching(/expired/) });
    const unknown = await client().post('/account/verify-email', { token: 'C'.repeat(43) });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toMatch(/unknown/);
    expect(unknown.body.message).not.toMatch(/expired/);
    const malformed = await client().post('/account/verify-email', { token: 'x' });
    expect(malformed.status).toBe(400);
    const missing = await client().post('/account/verify-email', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('Validation Error');
    const account = await db.query(`SELECT email_verified FROM accounts WHERE id = $1`, [res.body.account.id]);
    expect(account[0].email_verified).toBe(false);
  });

  it('resends a new link once a minute (429 with Retry-After), and not for a verified address (409)', async () => {
    const address = email();
    const browser = client();
    await browser.signUp(address);
    await tokenFor(address);
    const first = await browser.post('/account/verify-email/resend');
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ verification_email: 'sent' });
    const second = await browser.post('/account/verify-email/resend');
    expect(second.status).toBe(429);
    expect(second.body.error).toBe('Rate Limit Exceeded');
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const deadline = Date.now() + 10_000;
    while (mail.mails.filter((m) => m.to.includes(address)).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const tokens = mail.mails.filter((m) => m.to.includes(address)).map((m) => verificationTokenIn(m.raw));
    expect(tokens).toHaveLength(2);
    expect(tokens[0]).not.toBe(tokens[1]);
    expect((await client().post('/account/verify-email', { token: tokens[1] })).status).toBe(200);
    const verified = await browser.post('/account/verify-email/resend');
    expect(verified.status).toBe(409);
    expect((await client().post('/account/verify-email/resend')).status).toBe(401);
  });

  it('without SMTP_URL writes the link to the log as one info line, with the request’s origin', async () => {
    const address = email();
    const browser = new ConsoleClient(logged.url, conformance);
    const signedUp = await browser.signUp(address);
    expect(signedUp.status).toBe(201);
    // Only logged, and the console is told so (it must not claim an email was sent).
    expect(signedUp.body).toMatchObject({ verification_email: 'logged', verification_email_via: 'log' });
    expect((await browser.get('/account/session')).body.verification_email_via).toBe('log');
    const lines = log.lines.filter((l) => l.includes(address) && l.includes('/console/verify?token='));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^info Email verification for /);
    expect(lines[0]).toContain(`${logged.url}/console/verify?token=`);
    const token = verificationTokenIn(lines[0])!;
    expect((await browser.post('/account/verify-email', { token })).status).toBe(200);
  });

  it('without PUBLIC_BASE_URL points the link at the address the gateway was reached on, never at a Host or X-Forwarded-Host', async () => {
    const address = email();
    const { port } = new URL(logged.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        `${logged.url}/account/signup`,
        { method: 'POST', headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https', 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ email: address, password: 'correct horse battery staple' }));
    });
    expect(status).toBe(201);
    const lines = log.lines.filter((l) => l.includes(address) && l.includes('/console/verify?token='));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`http://127.0.0.1:${port}/console/verify?token=`);
    expect(lines[0]).not.toContain('evil.example');
  });

  // Last: Nest's loggers write to the logger of the most recently created app from here on.
  it('in production without SMTP_URL warns once at start and never writes a link to the log', async () => {
    expect(loadAccountAreaConfig({ NODE_ENV: 'production' }).logVerificationLinks).toBe(false);
    expect(loadAccountAreaConfig({ NODE_ENV: 'test' }).logVerificationLinks).toBe(true);
    const productionLog = new CapturingLogger();
    const production = await startAccountGateway({ logger: productionLog, area: { logVerificationLinks: false } });
    try {
      const warnings = productionLog.lines.filter((l) => l.startsWith('warn SMTP_URL is unset'));
      expect(warnings).toHaveLength(1);
      const address = email();
      const browser = new ConsoleClient(production.url, conformance);
      expect((await browser.signUp(address)).status).toBe(201);
      expect(productionLog.lines.filter((l) => l.includes('token='))).toEqual([]);
      expect(productionLog.lines.filter((l) => l.startsWith('warn verification mail not sent'))).toHaveLength(1);
      expect(productionLog.lines.filter((l) => l.startsWith('warn SMTP_URL is unset'))).toHaveLength(1);
    } finally {
      await production.gateway.close();
    }
  });
});
