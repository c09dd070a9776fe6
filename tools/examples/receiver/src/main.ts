/**
 * A webhook receiver, as a customer writes one: verify the raw body, the signature and the
 * timestamp with the `standardwebhooks` library *before* parsing, answer 2xx quickly, and
 * deduplicate by event id (deliveries are at least once and may arrive out of order).
 *
 *   WEBHOOK_SECRET=whsec_... PORT=8080 npm run example:receiver
 *
 * Prints one JSON line per event received (`{"event": …}`), and one per refused request.
 */
import { createServer } from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WEBHOOK_SECRET to the whsec_… secret returned when the webhook was created (or rotated).');
  process.exit(2);
}
// During a rotation's 24 h overlap, each delivery is signed with both secrets: either one verifies.
const verifier = new Webhook(secret);
const seen = new Set<string>();

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
    let event: { id: string; type: string };
    try {
      // Checks the signature over `{id}.{timestamp}.{raw body}` and a 5-minute timestamp tolerance.
      event = verifier.verify(body, headers) as { id: string; type: string };
    } catch (error) {
      const reason = error instanceof WebhookVerificationError ? error.message : 'unreadable request';
      console.log(JSON.stringify({ refused: reason }));
      res.writeHead(400).end();
      return;
    }
    const duplicate = seen.has(event.id);
    seen.add(event.id);
    console.log(JSON.stringify({ event, duplicate }));
    res.writeHead(204).end();
  });
});

const port = Number(process.env.PORT ?? 8080);
server.listen(port, process.env.HOST ?? '127.0.0.1', () => {
  console.log(JSON.stringify({ listening: `http://${process.env.HOST ?? '127.0.0.1'}:${port}/` }));
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
