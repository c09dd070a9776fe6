import { createAccount } from '@cars/accounts';
import { generateMasterKey, generateSigningSecret, SecretCipher } from '@cars/signing';
import { openIsolatedDatabase } from '@cars/testing';
import { DispatchRepository, FanOutRepository } from '@cars/webhook-store';
import { Pool } from 'pg';
import { LEASE_MARGIN_MS, resolveDeliveryOptions } from '../config/delivery.options';
import { AttemptOutcome } from './attempt-outcome';
import { DeliveryStore } from './delivery-store';
import { Dispatcher } from './dispatcher.service';
import { Sender } from './sender';

/**
 * Claims run several rounds ahead of sending. When a receiver slows down, a delivery may sit in
 * the worker's queue until its lease could no longer cover a whole attempt: it must go back to the
 * schedule unsent (no attempt used) and be claimed again under a new lease, so that no attempt is
 * ever in flight after its lease ran out — when the sweep of another worker may take it too.
 */
describe('Dispatcher: no attempt starts that its lease cannot cover (PostgreSQL)', () => {
  let close: (() => Promise<void>) | undefined;
  let pool: Pool;
  const masterKey = generateMasterKey();
  const sealed = SecretCipher.fromEnv(masterKey).encrypt(generateSigningSecret());
  // The shortest lease these options allow: 5 × the receiver timeout + the margin (6.5 s).
  const options = resolveDeliveryOptions({
    databaseUrl: 'unused',
    secretKeys: masterKey,
    receiverTimeoutMs: 300,
    concurrency: 4,
    perEndpointConcurrency: 1,
    accountConcurrency: 4,
  });

  beforeAll(async () => {
    ({ pool, close } = await openIsolatedDatabase('delivery_lease_cover', { poolSize: 6 }));
  });

  afterAll(async () => {
    await close?.();
  });

  it('hands a queued delivery back when its lease runs short, and sends it under a fresh one', async () => {
    const account = (await createAccount(pool, { email: 'slow@example.test', plan: '100k', emailVerified: true })).account.id;
    const {
      rows: [{ id: subscription }],
    } = await pool.query<{ id: string }>(
      `INSERT INTO webhook_subscriptions (account_id, url, event_types, secret_ciphertext, secret_key_id)
       VALUES ($1, 'https://receiver.example/slow', '{auction.created}', $2, $3) RETURNING id`,
      [account, sealed.ciphertext, sealed.keyId],
    );
    await pool.query(
      `INSERT INTO webhook_deliveries (subscription_id, account_id, event_id, event_type, payload, next_attempt_at)
       SELECT $1, $2, 'evt_' || g, 'auction.created', '{}', now() - make_interval(secs => 60 - g) FROM generate_series(1, 3) AS g`,
      [subscription, account],
    );

    // What each attempt's lease had left when it went out, read from the row it was sent for.
    const leftAtSend: number[] = [];
    let firstAnswer: ((outcome: AttemptOutcome) => void) | undefined;
    const ok: AttemptOutcome = { succeeded: true, status: 200, error: null, excerpt: null, durationMs: 1 };
    const sender = {
      send: async (_url: string, headers: Record<string, string>) => {
        const {
          rows: [{ left }],
        } = await pool.query<{ left: number }>(
          `SELECT extract(epoch FROM lease_expires_at - clock_timestamp())::float8 * 1000 AS left
             FROM webhook_deliveries WHERE event_id = $1 AND status = 'sending'`,
          [headers['webhook-id']],
        );
        leftAtSend.push(left);
        // The first receiver answer takes until the others' leases are too short for an attempt.
        if (leftAtSend.length === 1) return new Promise<AttemptOutcome>((answer) => (firstAnswer = answer));
        return ok;
      },
    } as unknown as Sender;

    const store = new DeliveryStore(pool, options, new DispatchRepository(), new FanOutRepository());
    const dispatcher = new Dispatcher(store, sender, options);
    dispatcher.wake();
    const deadline = Date.now() + 20_000;
    while (!firstAnswer) {
      if (Date.now() > deadline) throw new Error('the first attempt never started');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const needed = options.receiverTimeoutMs + LEASE_MARGIN_MS;
    // Hold the first attempt until the queued deliveries' leases cannot cover an attempt any more.
    await new Promise((resolve) => setTimeout(resolve, options.leaseMs - needed + 1_500));
    firstAnswer(ok);
    while (leftAtSend.length < 3) {
      if (Date.now() > deadline) throw new Error(`only ${leftAtSend.length} of 3 attempts went out`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await dispatcher.drain();

    expect(leftAtSend).toHaveLength(3);
    for (const left of leftAtSend) expect(left).toBeGreaterThanOrEqual(needed - 500);
    const { rows } = await pool.query(`SELECT status, attempts FROM webhook_deliveries WHERE subscription_id = $1 ORDER BY event_id`, [subscription]);
    expect(rows).toEqual([
      { status: 'succeeded', attempts: 1 },
      { status: 'succeeded', attempts: 1 },
      { status: 'succeeded', attempts: 1 },
    ]);
  }, 30_000);
});
