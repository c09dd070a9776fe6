import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ReceivedRequest {
  at: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

export type Answer = (request: ReceivedRequest, index: number) => { status: number; body?: string; headers?: Record<string, string>; delayMs?: number };

/** A webhook receiver on loopback that records every request and answers as told. */
export interface Receiver {
  url: (path?: string) => string;
  port: number;
  received: ReceivedRequest[];
  answer: Answer;
  close(): Promise<void>;
}

/** A certificate for `receiver.test`, self-signed, made for the run (the worker is given it as CA). */
export function makeCertificate(): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'receiver-cert-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=receiver.test',
      '-addext', 'subjectAltName=DNS:receiver.test', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function startReceiver(options: { tls?: { key: string; cert: string }; host?: string } = {}): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const receiver = {
    received,
    answer: (() => ({ status: 200, body: 'ok' })) as Answer,
  } as Receiver;
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: ReceivedRequest = {
        at: Date.now(),
        method: req.method ?? '',
        path: req.url ?? '',
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')])),
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const index = received.push(request) - 1;
      const reply = receiver.answer(request, index);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status, { 'content-type': 'text/plain', ...(reply.headers ?? {}) });
        res.end(reply.body ?? '');
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  };
  const server: Server = options.tls ? createHttpsServer(options.tls, handler) : createHttpServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const host = options.host ?? '127.0.0.1';
  receiver.port = port;
  receiver.url = (path = '/hook') => `${options.tls ? 'https' : 'http'}://${host}:${port}${path}`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections?.();
      server.close(() => resolve());
    });
  return receiver;
}
