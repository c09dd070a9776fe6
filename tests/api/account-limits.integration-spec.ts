import { randomUUID } from 'node:crypto';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ConsoleClient, OpenApiConformance, startAccountGateway } from './support/account-area';

jest.setTimeout(60_000);

const PASSWORD = 'correct horse battery staple';
const email = () => `limits-${randomUUID()}@example.test`;
/** A client address of its own (the gateway trusts X-Forwarded-For from the spec's address), so no other test shares its buckets. */
const address = () => `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`;

/**
 * Sign-in attempts are limited per email address (5 a minute) and per client address (20 a
 * minute, sign-ups included): 429 `Rate Limit Exceeded` with Retry-After, the usual envelope.
 */
describe('account area: sign-in limits', () => {
  let gateway: { url: string; gateway: NestFastifyApplication };
  /** A gateway that trusts no proxy (the default): X-Forwarded-For is anyone's to write. */
  let direct: { url: string; gateway: NestFastifyApplication };
  let conformance: OpenApiConformance;
  const from = (ip: string) => new ConsoleClient(gateway.url, conformance, { 'x-forwarded-for': ip });

  beforeAll(async () => {
    direct = await startAccountGateway({ area: { signInPerEmailPerMinute: 100, signInPerAddressPerMinute: 5 } });
    gateway = await startAccountGateway({
      trustedProxies: ['127.0.0.1/32'],
      area: { signInPerEmailPerMinute: 5, signInPerAddressPerMinute: 20 },
    });
    conformance = await OpenApiConformance.load(gateway.url);
  });

  afterAll(async () => {
    await gateway?.gateway.close();
    await direct?.gateway.close();
  });

  const expectLimited = (res: Awaited<ReturnType<ConsoleClient['post']>>, says: RegExp) => {
    expect(res.status).toBe(429);
    expect(res.body).toEqual({ error: 'Rate Limit Exceeded', message: expect.stringMatching(says) });
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(res.body.message).toContain(`retry after ${retryAfter} s`);
    expect(res.headers.get('set-cookie')).toBeNull();
  };

  it('allows 5 attempts a minute per email address, from any address; the 6th is 429 even with the right password', async () => {
    const target = email();
    expect((await from(address()).signUp(target, PASSWORD)).status).toBe(201);
    for (let i = 0; i < 5; i += 1) {
      const res = await from(address()).post('/account/signin', { email: target, password: `wrong password ${i}` });
      expect({ attempt: i, status: res.status }).toEqual({ attempt: i, status: 401 });
    }
    expectLimited(await from(address()).post('/account/signin', { email: target, password: PASSWORD }), /for this email address/);
    // Case and spaces do not make another bucket.
    expectLimited(await from(address()).post('/account/signin', { email: ` ${target.toUpperCase()} `, password: PASSWORD }), /for this email address/);
    // Another email address from the same client is not limited.
    const other = email();
    const client = from(address());
    expect((await client.signUp(other, PASSWORD)).status).toBe(201);
    expect((await client.post('/account/signin', { email: other, password: PASSWORD })).status).toBe(200);
  });

  it('allows 20 attempts a minute per client address (sign-ups count); other addresses go on', async () => {
    const ip = address();
    expect((await from(ip).signUp(email(), PASSWORD)).status).toBe(201);
    // The bucket refills at 20/60 per second while the attempts run: count until the first 429.
    let allowed = 1;
    let refused: Awaited<ReturnType<ConsoleClient['post']>> | undefined;
    while (!refused && allowed < 30) {
      const res = await from(ip).post('/account/signin', { email: email(), password: PASSWORD });
      if (res.status === 429) refused = res;
      else {
        expect(res.status).toBe(401);
        allowed += 1;
      }
    }
    expect(allowed).toBeGreaterThanOrEqual(20);
    expect(allowed).toBeLessThan(30);
    expectLimited(refused!, /from this address/);
    expectLimited(await from(ip).post('/account/signup', { email: email(), password: PASSWORD }), /from this address/);
    expect((await from(address()).post('/account/signin', { email: email(), password: PASSWORD })).status).toBe(401);
  });

  it('ignores X-Forwarded-For from a peer it does not trust: a new one per attempt does not escape the per-address limit', async () => {
    let allowed = 0;
    let refused: Awaited<ReturnType<ConsoleClient['post']>> | undefined;
    while (!refused && allowed < 10) {
      const res = await new ConsoleClient(direct.url, conformance, { 'x-forwarded-for': address() }).post('/account/signin', { email: email(), password: PASSWORD });
      if (res.status === 429) refused = res;
      else {
        expect(res.status).toBe(401);
        allowed += 1;
      }
    }
    expect(allowed).toBe(5);
    expectLimited(refused!, /from this address/);
    expectLimited(await new ConsoleClient(direct.url, conformance, { 'x-forwarded-for': address() }).signUp(email(), PASSWORD), /from this address/);
  });

  it('takes X-Forwarded-For from a trusted proxy: two forwarded addresses have a bucket each', async () => {
    const [a, b] = [address(), address()];
    let spent = 0;
    while ((await from(a).post('/account/signin', { email: email(), password: PASSWORD })).status === 401 && spent < 30) spent += 1;
    expect(spent).toBeGreaterThanOrEqual(20);
    expect((await from(b).post('/account/signin', { email: email(), password: PASSWORD })).status).toBe(401);
    expectLimited(await from(a).post('/account/signin', { email: email(), password: PASSWORD }), /from this address/);
  });
});
