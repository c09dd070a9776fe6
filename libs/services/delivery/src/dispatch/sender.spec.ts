import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { resolveDeliveryOptions } from '../config/delivery.options';
import { Sender } from './sender';

/**
 * The sender resolves and checks the destination on every attempt: a name that starts resolving
 * to private space is refused without a connection, even after earlier attempts went out.
 */
describe('Sender', () => {
  let server: Server;
  let connections = 0;
  let port: number;

  beforeAll(async () => {
    server = createServer((_req, res) => res.end('ok'));
    server.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const senderWith = (allowPrivate: boolean, dns: () => string[]) =>
    new Sender(
      resolveDeliveryOptions({
        databaseUrl: 'postgres://unused',
        secretKeys: 'unused',
        allowPrivateDestinations: allowPrivate,
        resolver: async () => dns(),
        receiverTimeoutMs: 500,
      }),
    );

  it('refuses a name that turns private between attempts, without connecting', async () => {
    let address = '127.0.0.1';
    const local = senderWith(true, () => [address]);
    expect(await local.send(`http://receiver.test:${port}/hook`, {}, '{}')).toMatchObject({ succeeded: true, status: 200 });
    await local.onApplicationShutdown();

    // The production policy: the same name now resolves to a private address.
    address = '10.0.0.7';
    const before = connections;
    const strict = senderWith(false, () => [address]);
    expect(await strict.send(`https://receiver.test/hook`, {}, '{}')).toMatchObject({ succeeded: false, error: 'destination_blocked' });
    address = '169.254.169.254';
    expect(await strict.send(`https://receiver.test/hook`, {}, '{}')).toMatchObject({ error: 'destination_blocked' });
    expect(connections).toBe(before);
    await strict.onApplicationShutdown();
  });

  it('fails a name that does not resolve as dns_error', async () => {
    const sender = senderWith(false, () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    });
    expect(await sender.send('https://nowhere.example.invalid/hook', {}, '{}')).toMatchObject({ succeeded: false, error: 'dns_error' });
  });

  it('bounds the whole exchange: a receiver that answers at once but trickles its body past the timeout fails as timeout', async () => {
    const trickle = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      // A byte every 100 ms: never idle long enough for a body timeout, never done within 500 ms.
      const drip = setInterval(() => res.write('.'), 100);
      res.on('close', () => clearInterval(drip));
    });
    await new Promise<void>((resolve) => trickle.listen(0, '127.0.0.1', resolve));
    const sender = senderWith(true, () => ['127.0.0.1']);
    const started = performance.now();
    const outcome = await sender.send(`http://receiver.test:${(trickle.address() as AddressInfo).port}/hook`, {}, '{}');
    const took = performance.now() - started;
    await sender.onApplicationShutdown();
    trickle.closeAllConnections();
    await new Promise<void>((resolve) => trickle.close(() => resolve()));
    expect(outcome).toMatchObject({ succeeded: false, status: null, error: 'timeout' });
    expect(took).toBeGreaterThanOrEqual(490);
    expect(took).toBeLessThan(1500);
  });

  it('keeps 4 KB of a long answer and sends the body, signature headers and its own headers as given', async () => {
    let seen: { body: string; headers: Record<string, unknown> } | null = null;
    const long = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen = { body, headers: req.headers };
        res.writeHead(503);
        res.end('é'.repeat(5000));
      });
    });
    await new Promise<void>((resolve) => long.listen(0, '127.0.0.1', resolve));
    const sender = senderWith(true, () => ['127.0.0.1']);
    const outcome = await sender.send(`http://receiver.test:${(long.address() as AddressInfo).port}/hook?x=1`, { 'webhook-id': 'evt_1' }, '{"a":1}');
    await sender.onApplicationShutdown();
    await new Promise<void>((resolve) => long.close(() => resolve()));
    expect(outcome).toMatchObject({ succeeded: false, status: 503, error: 'http_status' });
    // 4,096 bytes cut on a character boundary: 2,048 two-byte characters.
    expect(outcome.excerpt).toBe('é'.repeat(2048));
    expect(seen!.body).toBe('{"a":1}');
    expect(seen!.headers).toMatchObject({ 'webhook-id': 'evt_1', 'content-type': 'application/json', host: expect.stringMatching(/^receiver\.test:/) });
    expect(String(seen!.headers['user-agent'])).toMatch(/^ClassicCarAuctionData-Webhooks\//);
  });
});
