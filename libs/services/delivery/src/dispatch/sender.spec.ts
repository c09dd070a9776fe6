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
});
