/**
 * A webhook receiver, as a customer writes one: verify the raw body, the signature and the
 * timestamp with the `standardwebhooks` library *before* parsing, answer 2xx quickly, and
 * deduplicate by event id (deliveries are at least once and may arrive out of order).
 *
 *   WEBHOOK_SECRET=whsec_... PORT=8080 npm run example:receiver
 *   npm run example:receiver -- --secret whsec_... --port 8080 [--host 127.0.0.1] [--json]
 *
 * Prints each verified event readably (type, id, the auction or bid in one line, then `data`), and
 * each refused request with the reason; `--json` prints one JSON line per request instead.
 * A quick-start server sends to it only with WEBHOOK_ALLOW_PRIVATE_DESTINATIONS=true (http, loopback).
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

const { values: flags } = parseArgs({
  options: { secret: { type: 'string' }, port: { type: 'string' }, host: { type: 'string' }, json: { type: 'boolean', default: false } },
});
const secret = flags.secret ?? process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('Pass the whsec_… signing secret shown when the endpoint was created (or rotated): --secret whsec_… or WEBHOOK_SECRET=whsec_…');
  process.exit(2);
}
const port = Number(flags.port ?? process.env.PORT ?? 8080);
const host = flags.host ?? process.env.HOST ?? '127.0.0.1';
// During a rotation's 24 h overlap, each delivery is signed with both secrets: either one verifies.
const verifier = ((): Webhook => {
  try {
    return new Webhook(secret);
  } catch {
    console.error('That is not a signing secret: pass the whsec_… value the console (or POST /webhooks) showed, whole.');
    return process.exit(2);
  }
})();
const seen = new Set<string>();

interface Event {
  id: string;
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

/** One line that says what happened, then the event's data. */
function readable(event: Event, duplicate: boolean): string {
  const auction = event.data.auction as Record<string, unknown> | undefined;
  const bid = event.data.bid as Record<string, unknown> | undefined;
  let subject = '';
  if (auction) subject = `auction ${String(auction.id)} "${String(auction.title)}" ${String(auction.status)}, ${String(auction.price)} ${String(auction.currency)}`;
  if (bid) subject = `bid ${String(bid.id)} on auction ${String(bid.auction_id)}: ${String(bid.amount)} ${String(bid.currency)} at ${String(bid.bid_at)}`;
  if (typeof event.data.message === 'string') subject = event.data.message;
  const head = `verified ${event.type} ${event.id} (observed ${event.created_at})${duplicate ? ' — duplicate, already handled' : ''}`;
  return `${head}\n  ${subject}\n${JSON.stringify(event.data, null, 2).replace(/^/gm, '  ')}\n`;
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = {
      'webhook-id': String(req.headers['webhook-id'] ?? ''),
      'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
      'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
    };
    let event: Event;
    try {
      // Checks the signature over `{id}.{timestamp}.{raw body}` and a 5-minute timestamp tolerance.
      event = verifier.verify(body, headers) as Event;
    } catch (error) {
      const reason = error instanceof WebhookVerificationError ? error.message : 'unreadable request';
      const hint = /signature/i.test(reason) ? " — wrong secret? Pass the endpoint's current whsec_… secret" : '';
      console.log(flags.json ? JSON.stringify({ refused: reason }) : `REFUSED ${req.method} ${req.url}: ${reason}${hint}\n`);
      res.writeHead(400).end();
      return;
    }
    const duplicate = seen.has(event.id);
    seen.add(event.id);
    console.log(flags.json ? JSON.stringify({ event, duplicate }) : readable(event, duplicate));
    res.writeHead(204).end();
  });
});

server.on('error', (error: NodeJS.ErrnoException) => {
  console.error(error.code === 'EADDRINUSE' ? `${host}:${port} is in use: pick another port with --port (and use it in the endpoint URL)` : error.message);
  process.exit(1);
});
server.listen(port, host, () => {
  const url = `http://${host}:${port}/webhooks`;
  console.log(flags.json ? JSON.stringify({ listening: url }) : `Listening on ${url} — use it as the endpoint URL; events are verified with the secret you passed.\n`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
