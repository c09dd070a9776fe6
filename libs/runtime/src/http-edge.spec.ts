import { connect } from 'node:net';
import { GatewayEdgeEnv } from './config';
import { loadEnv } from './env';
import { HealthServer } from './health-server';
import { invalidTrustedProxyEntries, trustedProxyEntries } from './http-edge';

describe('TRUSTED_PROXIES', () => {
  it('takes addresses and CIDR ranges, IPv4 and IPv6; unset is nobody', () => {
    expect(trustedProxyEntries(undefined)).toEqual([]);
    expect(trustedProxyEntries(' 10.0.0.0/8, 127.0.0.1 ,,::1,fd00::/8 ')).toEqual(['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8']);
    expect(invalidTrustedProxyEntries('10.0.0.0/8,127.0.0.1,::1,fd00::/8,192.168.1.7/32')).toEqual([]);
  });

  it('fails the boot on anything else, naming it', () => {
    expect(invalidTrustedProxyEntries('10.0.0.0/33,1.2.3,example.com,::1/129,10.0.0.1/8/1,10.0.0.0/x')).toEqual([
      '10.0.0.0/33',
      '1.2.3',
      'example.com',
      '::1/129',
      '10.0.0.1/8/1',
      '10.0.0.0/x',
    ]);
    expect(() => loadEnv(GatewayEdgeEnv, { TRUSTED_PROXIES: '10.0.0.0/8,10.0.0.0/33' })).toThrow(
      /TRUSTED_PROXIES must be a comma-separated list of IP addresses and CIDR ranges.*"10\.0\.0\.0\/33"/,
    );
    expect(loadEnv(GatewayEdgeEnv, { TRUSTED_PROXIES: '10.0.0.0/8' }).TRUSTED_PROXIES).toBe('10.0.0.0/8');
  });
});

describe('health port timeouts', () => {
  it('closes a connection whose headers stop half way, and an idle one, within the headers timeout', async () => {
    const health = new HealthServer(async () => ({}), undefined, { headersMs: 200, requestMs: 400, keepAliveMs: 200, idleMs: 1_000 });
    const port = await health.listen(0, '127.0.0.1');
    const closedAfter = (chunks: string[]) =>
      new Promise<{ ms: number; text: string }>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        const started = Date.now();
        let text = '';
        socket.on('connect', () => chunks.forEach((c) => socket.write(c)));
        socket.on('data', (c: Buffer) => (text += c.toString()));
        socket.on('error', () => undefined);
        socket.on('close', () => resolve({ ms: Date.now() - started, text }));
      });
    try {
      const [idle, half] = await Promise.all([
        closedAfter([]),
        closedAfter(['GET /health/live HTTP/1.1\r\nHost: x\r\nX-Half: ']),
      ]);
      expect(idle.ms).toBeLessThan(200 + 50 + 500);
      expect(half.ms).toBeGreaterThanOrEqual(150);
      expect(half.ms).toBeLessThan(200 + 50 + 500);
      expect(half.text).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      await health.close();
    }
  });
});
