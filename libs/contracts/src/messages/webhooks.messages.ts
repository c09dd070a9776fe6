import { WebhooksPatterns } from '../patterns';
import { WebhookDelivery, WebhookSubscription } from '../webhooks/webhook-records';

/**
 * Webhook management over `webhooks.rpc`. Every request names the calling account (the gateway
 * authenticated it); ids arrive as the caller sent them (`whe_…`, `whd_…`) and bodies as parsed
 * JSON — the webhooks service checks both, so a malformed id is a 404 and a bad body a 400 with
 * `details`, whoever the producer.
 */
export interface WebhookCaller {
  account_id: string;
}

export interface WebhookRef extends WebhookCaller {
  id: string;
}

export interface WebhookListPage {
  data: WebhookSubscription[];
  meta: { total: number; page: number; limit: number; total_pages: number };
}

export interface WebhooksMessages {
  [WebhooksPatterns.List]: { request: WebhookCaller & { page?: number; limit?: number }; reply: WebhookListPage };
  [WebhooksPatterns.Create]: { request: WebhookCaller & { body: unknown }; reply: { data: WebhookSubscription; secret: string } };
  [WebhooksPatterns.Get]: { request: WebhookRef; reply: { data: WebhookSubscription } };
  [WebhooksPatterns.Update]: { request: WebhookRef & { body: unknown }; reply: { data: WebhookSubscription } };
  [WebhooksPatterns.Delete]: { request: WebhookRef; reply: { deleted: true } };
  [WebhooksPatterns.SendTest]: { request: WebhookRef; reply: { data: WebhookDelivery } };
  [WebhooksPatterns.RotateSecret]: { request: WebhookRef; reply: { data: { secret: string } } };
  [WebhooksPatterns.ListDeliveries]: { request: WebhookRef; reply: { data: WebhookDelivery[] } };
  [WebhooksPatterns.RetryDelivery]: { request: WebhookRef & { delivery_id: string }; reply: { data: WebhookDelivery } };
  [WebhooksPatterns.Recover]: { request: WebhookRef & { body: unknown }; reply: { data: { recovered: number } } };
}
