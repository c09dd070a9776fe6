import { Webhook, WebhookVerificationError as LibraryVerificationError } from 'standardwebhooks';
import type { AnyEventEnvelope } from './generated/events';

/** How far a delivery's `webhook-timestamp` may be from now: 5 minutes (the standardwebhooks default). */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

/** Any webhook event, discriminated by `type`. */
export type WebhookEvent = AnyEventEnvelope;

export type WebhookVerificationFailure =
  | 'missing_headers'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'invalid_signature'
  | 'invalid_payload';

/** The request is not a delivery of ours signed with the secret: answer 400 and do not act on it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';

  constructor(
    readonly reason: WebhookVerificationFailure,
    message: string,
  ) {
    super(message);
  }
}

/** A request's headers: a fetch `Headers`, or Node's `req.headers` (names in any case). */
export type WebhookHeaders = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

const HEADER_NAMES = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

/**
 * Verifies deliveries of one endpoint with the `standardwebhooks` library: the signature over
 * `{webhook-id}.{webhook-timestamp}.{raw body}` and a 5-minute timestamp tolerance, before the
 * body is parsed. During a secret rotation pass both secrets (each delivery is signed with both
 * for 24 hours, so either one verifies).
 */
export class WebhookVerifier {
  private readonly verifiers: Webhook[];

  constructor(secret: string | readonly string[]) {
    const secrets = typeof secret === 'string' ? [secret] : [...secret];
    if (secrets.length === 0) throw new TypeError('at least one signing secret (whsec_…) is required');
    this.verifiers = secrets.map((s) => new Webhook(s));
  }

  /** The event of a verified delivery; throws `WebhookVerificationError` otherwise. */
  verify(rawBody: string | Uint8Array, headers: WebhookHeaders): WebhookEvent {
    if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
      throw new TypeError('verify needs the raw body (string or bytes) exactly as received, not a parsed object');
    }
    const body = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
    const signed = signatureHeaders(headers);
    let mismatch: LibraryVerificationError | undefined;
    for (const verifier of this.verifiers) {
      try {
        verifier.verify(body, signed, { jsonParse: false });
        return parseEvent(body, signed['webhook-id']);
      } catch (error) {
        if (!(error instanceof LibraryVerificationError)) throw error;
        // Another secret may match; any other problem is the same whichever secret is tried.
        if (failureOf(error) !== 'invalid_signature') throw new WebhookVerificationError(failureOf(error), error.message);
        mismatch = error;
      }
    }
    throw new WebhookVerificationError('invalid_signature', mismatch?.message ?? 'No matching signature found');
  }
}

/**
 * Verifies one delivery (raw body and headers as received) with the endpoint's secret, or its
 * two secrets during a rotation, and returns the typed event.
 *
 * ```ts
 * const event = verifyWebhook(rawBody, req.headers, process.env.WEBHOOK_SECRET!);
 * switch (event.type) { case 'auction.ended': event.data.auction.price; … }
 * ```
 */
export function verifyWebhook(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string | readonly string[]): WebhookEvent {
  return new WebhookVerifier(secret).verify(rawBody, headers);
}

function signatureHeaders(headers: WebhookHeaders): Record<(typeof HEADER_NAMES)[number], string> {
  const read = (name: string): string => {
    if (typeof headers.get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? '';
    const record = headers as Record<string, string | string[] | undefined>;
    const key = Object.keys(record).find((k) => k.toLowerCase() === name);
    const value = key === undefined ? undefined : record[key];
    return (Array.isArray(value) ? value[0] : value) ?? '';
  };
  const [id, timestamp, signature] = HEADER_NAMES.map(read);
  if (!id || !timestamp || !signature) throw new WebhookVerificationError('missing_headers', `missing ${HEADER_NAMES.join(', ')} headers`);
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature };
}

function failureOf(error: LibraryVerificationError): WebhookVerificationFailure {
  if (/too old/i.test(error.message)) return 'timestamp_too_old';
  if (/too new/i.test(error.message)) return 'timestamp_too_new';
  if (/missing/i.test(error.message)) return 'missing_headers';
  if (/invalid signature headers/i.test(error.message)) return 'invalid_timestamp';
  return 'invalid_signature';
}

function parseEvent(body: string, webhookId: string): WebhookEvent {
  let event: unknown;
  try {
    event = JSON.parse(body);
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'the signed body is not JSON');
  }
  const { id, type, data } = (event ?? {}) as Record<string, unknown>;
  if (typeof id !== 'string' || typeof type !== 'string' || typeof data !== 'object' || data === null) {
    throw new WebhookVerificationError('invalid_payload', 'the signed body is not an event envelope');
  }
  // The id is signed twice (header and body): they must agree.
  if (id !== webhookId) throw new WebhookVerificationError('invalid_payload', `webhook-id ${webhookId} is not the event's id ${id}`);
  return event as WebhookEvent;
}
