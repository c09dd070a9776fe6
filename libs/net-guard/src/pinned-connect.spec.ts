import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, Server } from 'node:https';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { DestinationBlockedError, pinnedConnect } from './pinned-connect';

/**
 * A receiver on loopback with a certificate for `receiver.test` (self-signed, made for the run):
 * the pinned connection reaches it by the checked address while TLS and Host keep the name.
 */
describe('pinnedConnect', () => {
  let dir: string;
  let cert: string;
  let server: Server;
  let port: number;
  const seen: { host?: string; servername?: string }[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pinned-'));
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=receiver.test',
      '-addext', 'subjectAltName=DNS:receiver.test', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
      seen.push({ host: req.headers.host, servername: (req.socket as unknown as { servername?: string }).servername });
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const post = async (connect: ReturnType<typeof pinnedConnect>) => {
    const pool = new Pool(`https://receiver.test:${port}`, { connect });
    try {
      const res = await pool.request({ path: '/hook', method: 'POST', body: '{}' });
      return { status: res.statusCode, body: await res.body.text() };
    } finally {
      await pool.close();
    }
  };

  it('connects to the checked address with the host name for SNI, certificate and Host', async () => {
    const result = await post(pinnedConnect({ address: '127.0.0.1', family: 4, allowPrivate: true, tls: { ca: cert } }));
    expect(result).toEqual({ status: 200, body: 'ok' });
    expect(seen.at(-1)).toEqual({ host: `receiver.test:${port}`, servername: 'receiver.test' });
  });

  it('refuses forbidden space without opening a connection', async () => {
    const before = seen.length;
    await expect(post(pinnedConnect({ address: '127.0.0.1', family: 4, allowPrivate: false, tls: { ca: cert } }))).rejects.toBeInstanceOf(
      DestinationBlockedError,
    );
    expect(seen).toHaveLength(before);
  });

  it('still checks the certificate against the host name', async () => {
    await expect(post(pinnedConnect({ address: '127.0.0.1', family: 4, allowPrivate: true }))).rejects.toThrow(/certificate/i);
  });
});
