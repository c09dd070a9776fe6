import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookVerificationError, WebhookVerifier, WEBHOOK_TOLERANCE_SECONDS } from './webhook-verifier';

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const OTHER = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;

const event = {
  id: 'evt_5b7c2d1e-0000-4000-8000-000000000001',
  type: 'auction.ended',
  api_version: '2026-10-17',
  created_at: '2026-11-25T10:00:00.000Z',
  data: { auction: { id: '42', status: 'sold', price: 105000 }, changes: { status: { before: 'active', after: 'sold' } } },
};
const BODY = JSON.stringify(event);

function signed(body = BODY, options: { at?: Date; secrets?: string[]; id?: string } = {}) {
  const at = options.at ?? new Date();
  const id = options.id ?? event.id;
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': (options.secrets ?? [SECRET]).map((s) => new Webhook(s).sign(id, at, body)).join(' '),
  };
}

function failure(run: () => unknown): WebhookVerificationError {
  try {
    run();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error;
    throw error;
  }
  throw new Error('verified');
}

describe('verifyWebhook', () => {
  it('returns the typed event of a delivery signed with the secret', () => {
    const verified = verifyWebhook(BODY, signed(), SECRET);
    expect(verified).toEqual(event);
    if (verified.type === 'auction.ended') expect(verified.data.auction.price).toBe(105000);
  });

  it('takes the raw body as bytes, and headers as fetch Headers or Node headers in any case', () => {
    const headers = signed();
    expect(verifyWebhook(Buffer.from(BODY), headers, SECRET).id).toBe(event.id);
    expect(verifyWebhook(new TextEncoder().encode(BODY), new Headers(headers), SECRET).id).toBe(event.id);
    const node = { 'Webhook-Id': headers['webhook-id'], 'WEBHOOK-TIMESTAMP': [headers['webhook-timestamp']], 'webhook-signature': headers['webhook-signature'] };
    expect(verifyWebhook(BODY, node, SECRET).id).toBe(event.id);
  });

  it('refuses a tampered body, another secret, and a changed id', () => {
    expect(failure(() => verifyWebhook(BODY.replace('105000', '1'), signed(), SECRET)).reason).toBe('invalid_signature');
    expect(failure(() => verifyWebhook(BODY, signed(), OTHER)).reason).toBe('invalid_signature');
    const headers = { ...signed(), 'webhook-id': 'evt_other' };
    expect(failure(() => verifyWebhook(BODY, headers, SECRET)).reason).toBe('invalid_signature');
  });

  it(`allows ${WEBHOOK_TOLERANCE_SECONDS} s of clock difference either way, no more`, () => {
    const ago = (seconds: number) => new Date(Date.now() - seconds * 1000);
    expect(verifyWebhook(BODY, signed(BODY, { at: ago(WEBHOOK_TOLERANCE_SECONDS - 5) }), SECRET).id).toBe(event.id);
    expect(verifyWebhook(BODY, signed(BODY, { at: ago(-(WEBHOOK_TOLERANCE_SECONDS - 5)) }), SECRET).id).toBe(event.id);
    expect(failure(() => verifyWebhook(BODY, signed(BODY, { at: ago(WEBHOOK_TOLERANCE_SECONDS + 5) }), SECRET)).reason).toBe('timestamp_too_old');
    expect(failure(() => verifyWebhook(BODY, signed(BODY, { at: ago(-(WEBHOOK_TOLERANCE_SECONDS + 5)) }), SECRET)).reason).toBe('timestamp_too_new');
    expect(failure(() => verifyWebhook(BODY, { ...signed(), 'webhook-timestamp': 'yesterday' }, SECRET)).reason).toBe('invalid_timestamp');
  });

  it('refuses a request without the three headers', () => {
    const { 'webhook-signature': _, ...partial } = signed();
    expect(failure(() => verifyWebhook(BODY, partial, SECRET)).reason).toBe('missing_headers');
  });

  it('during a rotation: both signatures arrive; either secret verifies, and so do both together', () => {
    const headers = signed(BODY, { secrets: [OTHER, SECRET] });
    expect(verifyWebhook(BODY, headers, SECRET).id).toBe(event.id);
    expect(verifyWebhook(BODY, signed(), [OTHER, SECRET]).id).toBe(event.id);
    expect(new WebhookVerifier([OTHER]).verify(BODY, headers).id).toBe(event.id);
    expect(() => new WebhookVerifier([])).toThrow(TypeError);
  });

  it('refuses a signed body that is not an event, or whose id is not the webhook-id', () => {
    expect(failure(() => verifyWebhook('not json', signed('not json'), SECRET)).reason).toBe('invalid_payload');
    expect(failure(() => verifyWebhook('{"hello":1}', signed('{"hello":1}'), SECRET)).reason).toBe('invalid_payload');
    const other = signed(BODY, { id: 'evt_someone_else' });
    expect(failure(() => verifyWebhook(BODY, other, SECRET)).message).toMatch(/not the event's id/);
  });

  it('needs the raw body, not a parsed one', () => {
    expect(() => verifyWebhook(event as never, signed(), SECRET)).toThrow(/raw body/);
  });
});
