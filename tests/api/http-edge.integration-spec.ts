import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { openTestDataSource } from '@cars/testing';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import { AccessProbeModule } from './support/access-probe.module';
import { createTestAccount, TestAccount } from './support/accounts';
import { startTestGateway } from './support/stack';

/** The gateway's HTTP edge: requests a client library would not send, answered like any error. */
describe('HTTP edge cases', () => {
  let db: DataSource;
  let gateway: { url: string; gateway: NestFastifyApplication };
  let account: TestAccount;

  beforeAll(async () => {
    db = await openTestDataSource();
    gateway = await startTestGateway({ gatewayImports: [AccessProbeModule] });
    account = await createTestAccount(db, { plan: '10k' });
  });

  afterAll(async () => {
    await gateway?.gateway.close();
    await db?.destroy();
  });

  const send = (headers: Record<string, string | string[]>) =>
    new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
      const req = httpRequest(`${gateway.url}/probe-access/open`, { headers }, (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) as Record<string, unknown> }));
      });
      req.on('error', reject);
      req.end();
    });

  it('refuses two Authorization headers with 401, even when the first key is valid', async () => {
    expect((await send({ authorization: `Bearer ${account.apiKey}` })).status).toBe(200);
    for (const pair of [
      [`Bearer ${account.apiKey}`, 'Bearer cca_live_someoneelse000000000000000000000'],
      [`Bearer ${account.apiKey}`, `Bearer ${account.apiKey}`],
    ]) {
      const res = await send({ authorization: pair });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'Unauthorized', message: expect.stringContaining('More than one Authorization header') });
    }
  });

  it('answers CONNECT with the error envelope instead of closing the connection', async () => {
    const { port } = new URL(gateway.url);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
      });
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    const [head, body] = raw.split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 404 Not Found');
    expect(head.toLowerCase()).toContain('content-type: application/json');
    expect(JSON.parse(body)).toEqual({ error: 'Not Found', message: 'No route CONNECT example.com:443' });
  });
});
