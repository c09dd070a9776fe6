import { Webhook } from 'standardwebhooks';
import { generateSigningSecret, signWebhook, verifyWebhook, WebhookVerificationError, webhookHeaders } from './webhook-signature';

describe('webhook signatures (Standard Webhooks)', () => {
  it('matches the official test vector', () => {
    const signature = signWebhook(
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      new Date(1614265330 * 1000),
      '{"test": 2432232314}',
    );
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('signs byte for byte as the standardwebhooks library does: any secret, id, time and body (UTF-8 included)', () => {
    const bodies = ['', '{}', '{"make":"Škoda","title":"Café racer — 1972 ’Ducati’ 750 🏍"}', 'x'.repeat(70_000)];
    for (let i = 0; i < 200; i += 1) {
      const secret = i % 10 === 0 ? 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' : generateSigningSecret();
      const msgId = `evt_${i.toString(36)}_${'é'.repeat(i % 3)}`;
      const timestamp = new Date(1_600_000_000_000 + i * 987_654_321 + (i % 1000));
      const body = bodies[i % bodies.length] + String(i);
      expect(signWebhook(secret, msgId, timestamp, body)).toBe(new Webhook(secret).sign(msgId, timestamp, body));
    }
    // The library also takes a secret without the prefix (its base64 alone).
    const bare = generateSigningSecret().slice('whsec_'.length);
    expect(signWebhook(bare, 'evt_1', new Date(0), '{}')).toBe(new Webhook(bare).sign('evt_1', new Date(0), '{}'));
  });

  it('generates whsec_ secrets of 32 random bytes that the library accepts', () => {
    const a = generateSigningSecret();
    const b = generateSigningSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(a).not.toBe(b);
    expect(() => new Webhook(a)).not.toThrow();
  });

  it('signs an attempt that a receiver verifies, and refuses a changed body or another secret', () => {
    const secret = generateSigningSecret();
    const body = JSON.stringify({ id: 'evt_1', type: 'auction.created', data: { auction: { id: '42' } } });
    const headers = webhookHeaders({ msgId: 'evt_1', timestamp: new Date(), body, secrets: [secret] });
    expect(headers['webhook-id']).toBe('evt_1');
    expect(headers['webhook-timestamp']).toMatch(/^\d{10}$/);
    expect(verifyWebhook(secret, body, { ...headers })).toEqual(JSON.parse(body));
    expect(() => verifyWebhook(secret, body.replace('42', '43'), { ...headers })).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(generateSigningSecret(), body, { ...headers })).toThrow(WebhookVerificationError);
  });

  it('carries two signatures during a rotation: either secret verifies', () => {
    const current = generateSigningSecret();
    const previous = generateSigningSecret();
    const body = '{"type":"bid.created"}';
    const headers = webhookHeaders({ msgId: 'evt_2', timestamp: new Date(), body, secrets: [current, previous] });
    const signatures = headers['webhook-signature'].split(' ');
    expect(signatures).toHaveLength(2);
    expect(signatures.every((s) => s.startsWith('v1,'))).toBe(true);
    expect(verifyWebhook(current, body, { ...headers })).toEqual({ type: 'bid.created' });
    expect(verifyWebhook(previous, body, { ...headers })).toEqual({ type: 'bid.created' });
  });

  it('refuses a timestamp outside the tolerance (replays)', () => {
    const secret = generateSigningSecret();
    const body = '{}';
    const old = webhookHeaders({ msgId: 'evt_3', timestamp: new Date(Date.now() - 10 * 60_000), body, secrets: [secret] });
    expect(() => verifyWebhook(secret, body, { ...old })).toThrow(WebhookVerificationError);
  });

  it('needs at least one secret', () => {
    expect(() => webhookHeaders({ msgId: 'evt_4', timestamp: new Date(), body: '{}', secrets: [] })).toThrow(/secret/);
  });
});
