import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Queues } from '@cars/contracts';
import { StatsModule } from '@cars/service-stats';
import { QueryModule } from '@cars/service-query';
import { openTestDataSource } from '@cars/testing';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import { accountAreaModule, ConsoleClient, OpenApiConformance, startAccountGateway } from './support/account-area';
import { startTestStack, TestStack } from './support/stack';

jest.setTimeout(60_000);

const PASSWORD = 'correct horse battery staple';
const email = () => `console-${randomUUID()}@example.test`;

/** A raw HTTP request with headers fetch would not send as given (Host). */
function rawRequest(url: string, options: { method: string; headers: Record<string, string>; body?: string }): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method, headers: options.headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/**
 * Sign-up, sign-in, sign-out and the session of the account area: server-side sessions in
 * PostgreSQL, the cookie's flags, CSRF and Origin checks, password change. Every answer is
 * checked against /openapi.json.
 */
describe('account area: sessions', () => {
  let stack: TestStack;
  let db: DataSource;
  let conformance: OpenApiConformance;
  let proxied: { url: string; gateway: NestFastifyApplication };
  let client: () => ConsoleClient;

  beforeAll(async () => {
    db = await openTestDataSource();
    stack = await startTestStack({
      services: [{ queue: Queues.QueryRpc, module: QueryModule }, { queue: Queues.StatsRpc, module: StatsModule }],
      gatewayImports: [accountAreaModule()],
    });
    proxied = await startAccountGateway({ trustedProxies: ['127.0.0.1/32'] });
    conformance = await OpenApiConformance.load(stack.url);
    client = () => new ConsoleClient(stack.url, conformance);
  });

  afterAll(async () => {
    await proxied?.gateway.close();
    await stack?.close();
    await db?.destroy();
  });

  it('signs up a Free, unverified account with a session, and stores only a scrypt hash', async () => {
    const browser = client();
    const address = email();
    const res = await browser.signUp(address, PASSWORD);
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['account', 'csrf_token', 'verification_email', 'verification_email_via']);
    expect(res.body.account).toEqual({
      id: expect.any(String),
      email: address,
      email_verified: false,
      plan: 'free',
      plan_expires_at: null,
      created_at: expect.any(String),
    });
    const [credentials] = await db.query(`SELECT password_hash FROM account_credentials WHERE account_id = $1`, [res.body.account.id]);
    expect(credentials.password_hash).toMatch(/^scrypt\$\d+\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(credentials.password_hash).not.toContain(PASSWORD);
    const [session] = await db.query(`SELECT token_hash FROM account_sessions WHERE account_id = $1`, [res.body.account.id]);
    expect(session.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(session.token_hash).not.toBe(browser.cookie);

    const me = await browser.get('/account/session');
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ account: res.body.account, csrf_token: res.body.csrf_token, verification_email_via: res.body.verification_email_via });
  });

  it('refuses a taken email (409), a short or long password and a bad email (400 naming them)', async () => {
    const address = email();
    expect((await client().signUp(address)).status).toBe(201);
    const again = await client().signUp(address.toUpperCase());
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('Conflict');
    const short = await client().post('/account/signup', { email: 'not-an-email', password: 'short' });
    expect(short.status).toBe(400);
    expect(short.body.error).toBe('Validation Error');
    expect(Object.keys(short.body.details).sort()).toEqual(['email', 'password']);
    const long = await client().post('/account/signup', { email: email(), password: 'x'.repeat(201) });
    expect(long.status).toBe(400);
    expect(long.body.details.password).toEqual(['password must be 10 to 200 characters']);
    const extra = await client().post('/account/signup', { email: email(), password: PASSWORD, plan: '100k' });
    expect(extra.status).toBe(400);
    expect(Object.keys(extra.body.details)).toEqual(['plan']);
  });

  it('answers an email holding a NUL character with a 400, on sign-up and on sign-in', async () => {
    const signUp = await client().post('/account/signup', { email: 'a\u0000b@example.test', password: PASSWORD });
    expect(signUp.status).toBe(400);
    expect(signUp.body.details.email).toEqual(['email must be an email address']);
    const signIn = await client().post('/account/signin', { email: '\u0000', password: PASSWORD });
    expect(signIn.status).toBe(400);
    expect(signIn.body.details.email).toEqual(['email must not contain NUL characters']);
  });

  it('takes JSON only on sign-up and sign-in (a form post, or no content type, is 415)', async () => {
    for (const path of ['/account/signup', '/account/signin']) {
      for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x']) {
        const res = await fetch(`${stack.url}${path}`, { method: 'POST', headers: { 'content-type': type }, body: `email=a%40b.c&password=${'x'.repeat(12)}` });
        expect({ path, type, status: res.status }).toEqual({ path, type, status: 415 });
        expect(((await res.json()) as { error: string }).error).toBe('Unsupported Media Type');
      }
      const untyped = await fetch(`${stack.url}${path}`, { method: 'POST', body: new Uint8Array(Buffer.from('{}')) });
      expect({ path, status: untyped.status }).toEqual({ path, status: 415 });
    }
  });

  it('signs in with the right password only, with one message for an unknown email and a wrong password', async () => {
    const address = email();
    await client().signUp(address);
    const browser = client();
    const ok = await browser.post('/account/signin', { email: address.toUpperCase(), password: PASSWORD });
    expect(ok.status).toBe(200);
    expect(ok.body.account.email).toBe(address);
    expect((await browser.get('/account/session')).status).toBe(200);
    const wrong = await client().post('/account/signin', { email: address, password: 'wrong password!' });
    const unknown = await client().post('/account/signin', { email: email(), password: PASSWORD });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body).toEqual({ error: 'Unauthorized', message: 'The email address or password is wrong' });
    expect(wrong.headers.get('set-cookie')).toBeNull();
  });

  it('answers 401 without a session, with an unknown or malformed cookie', async () => {
    const anonymous = client();
    const none = await anonymous.get('/account/session');
    expect(none.status).toBe(401);
    expect(none.body.error).toBe('Unauthorized');
    anonymous.cookie = 'A'.repeat(43);
    expect((await anonymous.get('/account/session')).status).toBe(401);
    anonymous.cookie = 'not a token';
    expect((await anonymous.get('/account/overview')).status).toBe(401);
  });

  it('signs out: the session row is gone, the cookie cleared, and the old cookie is refused', async () => {
    const browser = client();
    const { body } = await browser.signUp(email());
    const cookie = browser.cookie;
    const out = await browser.post('/account/signout');
    expect(out.status).toBe(204);
    expect(browser.lastSetCookie).toMatch(/^cars_session=; Max-Age=0; Path=\/; HttpOnly; SameSite=Strict$/);
    expect(await db.query(`SELECT 1 FROM account_sessions WHERE account_id = $1`, [body.account.id])).toHaveLength(0);
    const replay = client();
    replay.cookie = cookie;
    expect((await replay.get('/account/session')).status).toBe(401);
  });

  it('ends sessions at their idle and absolute expiry', async () => {
    const idle = client();
    const { body } = await idle.signUp(email());
    await db.query(`UPDATE account_sessions SET idle_expires_at = now() - interval '1 second' WHERE account_id = $1`, [body.account.id]);
    expect((await idle.get('/account/session')).status).toBe(401);
    const absolute = client();
    const second = await absolute.signUp(email());
    await db.query(`UPDATE account_sessions SET expires_at = now() - interval '1 second' WHERE account_id = $1`, [second.body.account.id]);
    expect((await absolute.get('/account/session')).status).toBe(401);
  });

  describe('the cookie', () => {
    it('is HttpOnly, SameSite=Strict, Path=/, and not Secure on a loopback host over HTTP', async () => {
      const browser = client();
      await browser.signUp(email());
      expect(browser.lastSetCookie).toMatch(/^cars_session=[A-Za-z0-9_-]{43}; Max-Age=\d+; Path=\/; HttpOnly; SameSite=Strict$/);
      const maxAge = Number(/Max-Age=(\d+)/.exec(browser.lastSetCookie!)![1]);
      expect(maxAge).toBeGreaterThan(6 * 86400);
      expect(maxAge).toBeLessThanOrEqual(7 * 86400);
      for (const host of ['localhost', `localhost:${new URL(stack.url).port}`, '[::1]:3000']) {
        const res = await rawRequest(`${stack.url}/account/signup`, {
          method: 'POST',
          headers: { host, 'content-type': 'application/json' },
          body: JSON.stringify({ email: email(), password: PASSWORD }),
        });
        expect({ host, status: res.status }).toEqual({ host, status: 201 });
        expect(String(res.headers['set-cookie'])).not.toMatch(/Secure/);
      }
    });

    it('is Secure when the request came to another host', async () => {
      const res = await rawRequest(`${stack.url}/account/signup`, {
        method: 'POST',
        headers: { host: 'cars.example.com', 'content-type': 'application/json' },
        body: JSON.stringify({ email: email(), password: PASSWORD }),
      });
      expect(res.status).toBe(201);
      expect(String(res.headers['set-cookie'])).toMatch(/; HttpOnly; Secure; SameSite=Strict$/);
    });

    it('is Secure behind a trusted proxy that says https (X-Forwarded-Proto), even to a loopback host', async () => {
      const res = await rawRequest(`${proxied.url}/account/signup`, {
        method: 'POST',
        headers: { 'x-forwarded-proto': 'https', 'content-type': 'application/json' },
        body: JSON.stringify({ email: email(), password: PASSWORD }),
      });
      expect(res.status).toBe(201);
      expect(String(res.headers['set-cookie'])).toMatch(/; Secure; SameSite=Strict$/);
      // The same header from an untrusted client changes nothing.
      const direct = await rawRequest(`${stack.url}/account/signup`, {
        method: 'POST',
        headers: { 'x-forwarded-proto': 'https', 'content-type': 'application/json' },
        body: JSON.stringify({ email: email(), password: PASSWORD }),
      });
      expect(String(direct.headers['set-cookie'])).not.toMatch(/Secure/);
    });
  });

  describe('CSRF', () => {
    it('needs the session’s X-CSRF-Token on every change: missing or wrong → 403', async () => {
      const browser = client();
      await browser.signUp(email());
      const changes: [string, string, unknown?][] = [
        ['POST', '/account/keys'],
        ['POST', '/account/signout'],
        ['POST', '/account/password', { current_password: PASSWORD, new_password: 'another long password' }],
        ['POST', '/account/verify-email/resend'],
        ['DELETE', `/account/keys/${randomUUID()}`],
        ['POST', '/account/webhooks', { url: 'https://hooks.example.com/x', event_types: ['auction.ended'] }],
      ];
      for (const [method, path, body] of changes) {
        const missing = await browser.call(method, path, body, { csrf: false });
        expect({ path, status: missing.status, error: missing.body.error }).toEqual({ path, status: 403, error: 'Forbidden' });
        expect(missing.body.message).toMatch(/X-CSRF-Token/);
        const wrong = await browser.call(method, path, body, { csrf: false, headers: { 'x-csrf-token': 'B'.repeat(43) } });
        expect({ path, status: wrong.status }).toEqual({ path, status: 403 });
      }
      // Another session's token is as wrong as any.
      const other = client();
      await other.signUp(email());
      const foreign = await browser.call('POST', '/account/keys', undefined, { csrf: false, headers: { 'x-csrf-token': other.csrf! } });
      expect(foreign.status).toBe(403);
      // Nothing happened; with the token it works.
      expect((await browser.get('/account/keys')).body.data).toEqual([]);
      expect((await browser.post('/account/keys')).status).toBe(201);
      expect((await browser.get('/account/session')).status).toBe(200);
    });

    it('refuses a cross-site Origin (and Sec-Fetch-Site: cross-site), sign-up and sign-in included', async () => {
      const browser = client();
      await browser.signUp(email());
      const evil = { origin: 'https://evil.example' };
      expect((await browser.post('/account/keys', undefined, { headers: evil })).status).toBe(403);
      expect((await browser.post('/account/keys', undefined, { headers: { 'sec-fetch-site': 'cross-site' } })).status).toBe(403);
      const signup = await client().post('/account/signup', { email: email(), password: PASSWORD }, { headers: evil });
      expect(signup.status).toBe(403);
      expect(signup.body.message).toMatch(/Cross-site request refused/);
      expect((await client().post('/account/signin', { email: email(), password: PASSWORD }, { headers: evil })).status).toBe(403);
      // Its own origin passes.
      expect((await browser.post('/account/keys', undefined, { headers: { origin: stack.url } })).status).toBe(201);
      expect((await browser.post('/account/keys', undefined, { headers: { 'sec-fetch-site': 'same-origin' } })).status).toBe(201);
    });

    it('compares Origin with its own origin, never with one a header names (X-Forwarded-Host, Host), even from a trusted proxy', async () => {
      const forged = { origin: 'https://evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };
      for (const gateway of [stack.url, proxied.url]) {
        const browser = new ConsoleClient(gateway, conformance);
        expect((await browser.signUp(email())).status).toBe(201);
        const res = await browser.post('/account/keys', undefined, { headers: forged });
        expect({ gateway, status: res.status }).toEqual({ gateway, status: 403 });
        expect(res.body.message).toMatch(/Cross-site request refused/);
        const signup = await rawRequest(`${gateway}/account/signup`, {
          method: 'POST',
          headers: { ...forged, host: 'evil.example', 'content-type': 'application/json' },
          body: JSON.stringify({ email: email(), password: PASSWORD }),
        });
        expect({ gateway, status: signup.status }).toEqual({ gateway, status: 403 });
        // The page's own origin (the address the gateway was reached on) still passes, under a loopback name too.
        expect((await browser.post('/account/keys', undefined, { headers: { origin: gateway } })).status).toBe(201);
        const localhost = gateway.replace('127.0.0.1', 'localhost');
        expect((await browser.post('/account/keys', undefined, { headers: { origin: localhost } })).status).toBe(201);
      }
    });
  });

  it('changes the password: needs the current one, ends every other session, keeps this one', async () => {
    const address = email();
    const first = client();
    await first.signUp(address);
    const second = client();
    await second.post('/account/signin', { email: address, password: PASSWORD });
    const third = client();
    await third.post('/account/signin', { email: address, password: PASSWORD });

    const wrong = await first.post('/account/password', { current_password: 'not the password', new_password: 'a brand new password' });
    expect(wrong.status).toBe(403);
    const short = await first.post('/account/password', { current_password: PASSWORD, new_password: 'short' });
    expect(short.status).toBe(400);
    expect(Object.keys(short.body.details)).toEqual(['new_password']);

    const changed = await first.post('/account/password', { current_password: PASSWORD, new_password: 'a brand new password' });
    expect(changed.status).toBe(204);
    expect((await first.get('/account/session')).status).toBe(200);
    expect((await second.get('/account/session')).status).toBe(401);
    expect((await third.get('/account/session')).status).toBe(401);
    expect((await client().post('/account/signin', { email: address, password: PASSWORD })).status).toBe(401);
    expect((await client().post('/account/signin', { email: address, password: 'a brand new password' })).status).toBe(200);
  });

  it('never lets a session cookie authorize the data API', async () => {
    const browser = client();
    await browser.signUp(email());
    const cookie = `cars_session=${browser.cookie}`;
    for (const path of ['/auctions', '/auctions/live', '/auctions/1/bids', '/stats?make=Porsche', '/webhooks', '/mcp']) {
      const res = await fetch(`${stack.url}${path}`, { headers: { cookie } });
      expect({ path, status: res.status }).toEqual({ path, status: 401 });
      expect(((await res.json()) as { message: string }).message).toMatch(/API key is required/);
    }
    const post = await fetch(`${stack.url}/webhooks`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json', 'x-csrf-token': browser.csrf! },
      body: JSON.stringify({ url: 'https://hooks.example.com/x', event_types: ['auction.ended'] }),
    });
    expect(post.status).toBe(401);
  });
});
