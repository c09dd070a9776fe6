import { Drill } from './prepare';
import { Stack } from './stack';

/** Webhook endpoints, created through the API: every event type, and Porsche creations and ends. */
export async function createWebhookEndpoints(drill: Drill, stack: Stack): Promise<void> {
  for (const [path, body, behaviour] of [
    ['/all', { event_types: ['auction.created', 'auction.updated', 'auction.ended', 'bid.created'] }, {}],
    ['/porsche', { event_types: ['auction.created', 'auction.ended'], filters: { make: 'Porsche' } }, { failRate: 0.05 }],
  ] as const) {
    const created = await stack.send('/webhooks', drill.hooksKey, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:${drill.receiversPort}${path}`, ...body }),
    });
    if (created.status !== 201) throw new Error(`POST /webhooks answered ${created.outcome}: ${created.body}`);
    const answer = JSON.parse(created.body) as { secret: string };
    drill.routes.set(path, { secret: answer.secret, ...behaviour });
  }
}
