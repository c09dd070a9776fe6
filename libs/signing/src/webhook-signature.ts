import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export { WebhookVerificationError } from 'standardwebhooks';

/** Prefix of a signing secret (Standard Webhooks): `whsec_` + base64 of the key bytes. */
export const SIGNING_SECRET_PREFIX = 'whsec_';

/** A new endpoint signing secret: `whsec_` + base64 of 32 random bytes. */
export function generateSigningSecret(): string {
  return `${SIGNING_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** One `v1,<base64>` signature of a message (Standard Webhooks: HMAC-SHA256 of `id.timestamp.body`). */
export function signWebhook(secret: string, msgId: string, timestamp: Date, body: string): string {
  return new Webhook(secret).sign(msgId, timestamp, body);
}

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * The headers of one delivery attempt: `webhook-id` (the event id, the same on every attempt),
 * `webhook-timestamp` (this attempt, Unix seconds) and `webhook-signature` — one `v1,…` per secret,
 * space-separated: the current secret first, then the previous one while a rotation's overlap lasts.
 */
export function webhookHeaders(input: { msgId: string; timestamp: Date; body: string; secrets: readonly string[] }): WebhookHeaders {
  if (input.secrets.length === 0) throw new Error('at least one signing secret is required');
  return {
    'webhook-id': input.msgId,
    'webhook-timestamp': String(Math.floor(input.timestamp.getTime() / 1000)),
    'webhook-signature': input.secrets.map((secret) => signWebhook(secret, input.msgId, input.timestamp, input.body)).join(' '),
  };
}

/**
 * What a receiver does (and our tests do): verifies the signature and the timestamp tolerance
 * with the standardwebhooks library; returns the parsed body, throws WebhookVerificationError.
 */
export function verifyWebhook(secret: string, body: string, headers: Record<string, string>): unknown {
  return new Webhook(secret).verify(body, headers);
}
