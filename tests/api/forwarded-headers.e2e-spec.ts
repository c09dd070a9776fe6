import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { AppProcess, freePort, startApp, waitForOk } from './support/processes';

jest.setTimeout(90_000);

const PASSWORD = 'correct horse battery staple';
const email = () => `forwarded-${randomUUID()}@example.test`;
const address = () => `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

/** One request with exactly these headers (Host included), the body as JSON. */
function send(base: string, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method, headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers } }, (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/**
 * The gateway app as it is deployed (its own process, its environment): X-Forwarded-* count only
 * from the peers of TRUSTED_PROXIES, and no request header ever names the site in a link or in the
 * same-site check.
 */
describe('gateway app: forwarded headers', () => {
  const apps: AppProcess[] = [];

  const start = async (extra: Record<string, string>): Promise<{ app: AppProcess; base: string }> => {
    const port = await freePort();
    const app = startApp('gateway', {
      PORT: String(port),
      HOST: '127.0.0.1',
      SIGNIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE: '5',
      SIGNIN_ATTEMPTS_PER_EMAIL_PER_MINUTE: '100',
      ...extra,
    });
    apps.push(app);
    const base = `http://127.0.0.1:${port}`;
    await waitForOk(`${base}/health/live`);
    return { app, base };
  };

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.stop()));
  });

  it('by default trusts no peer: a new X-Forwarded-For per attempt does not escape the per-address limit', async () => {
    const { base } = await start({});
    const attempts: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      attempts.push((await send(base, 'POST', '/account/signin', { 'x-forwarded-for': address() }, { email: email(), password: PASSWORD })).status);
    }
    expect(attempts).toEqual([401, 401, 401, 401, 401, 429]);
  });

  it('never takes a link or the same-site origin from Host or X-Forwarded-Host/-Proto', async () => {
    const { app, base } = await start({});
    const forged = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };
    const who = email();
    const signUp = await send(base, 'POST', '/account/signup', forged, { email: who, password: PASSWORD });
    expect(signUp.status).toBe(201);
    const deadline = Date.now() + 10_000;
    while (!app.output().includes(who) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const line = app
      .output()
      .split('\n')
      .find((l) => l.includes(who) && l.includes('/console/verify?token='));
    expect(line).toContain(`${base}/console/verify?token=`);
    expect(line).not.toContain('evil.example');

    const cookie = String(signUp.headers['set-cookie']).split(';')[0];
    const session = { cookie, 'x-csrf-token': String(signUp.body.csrf_token) };
    const refused = await send(base, 'POST', '/account/keys', { ...session, ...forged, origin: 'https://evil.example' });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'Forbidden', message: expect.stringMatching(/^Cross-site request refused/) });
    expect((await send(base, 'POST', '/account/keys', { ...session, origin: base })).status).toBe(201);
  });

  it('with TRUSTED_PROXIES takes X-Forwarded-For from those peers: two forwarded addresses have a bucket each', async () => {
    const { base } = await start({ TRUSTED_PROXIES: '127.0.0.1/32' });
    const [a, b] = [address(), address()];
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      statuses.push((await send(base, 'POST', '/account/signin', { 'x-forwarded-for': a }, { email: email(), password: PASSWORD })).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    expect((await send(base, 'POST', '/account/signin', { 'x-forwarded-for': b }, { email: email(), password: PASSWORD })).status).toBe(401);
  });

  it('stops at boot on a TRUSTED_PROXIES entry that is not an address or a range, naming it', async () => {
    const app = startApp('gateway', { PORT: String(await freePort()), HOST: '127.0.0.1', TRUSTED_PROXIES: '10.0.0.0/8,10.0.0.0/33' });
    apps.push(app);
    // A gateway that boots anyway would run on: give it 20 s to stop.
    const code = await new Promise<number | null | 'still running'>((resolve) => {
      const timer = setTimeout(() => resolve('still running'), 20_000);
      app.child.once('exit', (exitCode) => {
        clearTimeout(timer);
        resolve(exitCode);
      });
    });
    expect(code).toBe(1);
    expect(app.output()).toMatch(/TRUSTED_PROXIES must be a comma-separated list of IP addresses and CIDR ranges.*"10\.0\.0\.0\/33"/);
  });
});
