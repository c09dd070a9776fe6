/**
 * Loopback webhook receivers for the fault drills: one HTTP server whose paths are endpoints.
 * Each request is verified with its path's signing secret (Standard Webhooks) and its
 * `webhook-id` checked against the event id; every arrival is recorded (compactly: no bodies).
 */
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { verifyWebhook } from '@cars/signing';

export interface ReceiverRoute {
  /** The endpoint's signing secret (`whsec_…`). */
  secret: string;
  /** Share of requests answered 500 (a flaky endpoint), 0–1. */
  failRate?: number;
  /** Delay before answering (a slow endpoint). */
  delayMs?: number;
}

export interface Arrival {
  path: string;
  eventId: string;
  /** The receiver answered 2xx. */
  ok: boolean;
  at: number;
  /** The event type, and what it is about: `data.auction.url`, else `data.auction.id`, else `data.bid.id`. */
  type: string;
  subject: string | null;
}

interface VerifiedEvent {
  id: string;
  type?: string;
  data?: { auction?: { id?: unknown; url?: unknown }; bid?: { id?: unknown } };
}

/** Starts the receivers on 127.0.0.1. Routes may be added after the start (the URL needs the port first). */
export async function startReceivers(
  routes: Map<string, ReceiverRoute>,
  arrivals: Arrival[],
  problems: string[],
): Promise<{ port: number; server: Server; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '';
      const route = routes.get(path);
      const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(req.headers[h] ?? '')]));
      let event: VerifiedEvent | null = null;
      try {
        if (!route) throw new Error('no such endpoint');
        event = verifyWebhook(route.secret, body, headers) as VerifiedEvent;
        if (event.id !== headers['webhook-id']) problems.push(`webhook-id ${headers['webhook-id']} carries event ${event.id}`);
      } catch (error) {
        problems.push(`${path}: a request did not verify (${String(error)})`);
      }
      const fail = Math.random() < (route?.failRate ?? 0);
      const data = event?.data;
      const subject = data?.auction?.url ?? data?.auction?.id ?? data?.bid?.id ?? null;
      arrivals.push({
        path,
        eventId: headers['webhook-id'],
        ok: !fail,
        at: Date.now(),
        type: event?.type ?? '',
        subject: subject === null ? null : String(subject),
      });
      const answer = () => res.writeHead(fail ? 500 : 200).end(fail ? 'try again' : 'ok');
      if (route?.delayMs) setTimeout(answer, route.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { port: (server.address() as AddressInfo).port, server, close };
}
