import { createAccount } from '@cars/accounts';
import { generateMasterKey, generateSigningSecret, SecretCipher } from '@cars/signing';
import { openIsolatedDatabase } from '@cars/testing';
import { DispatchRepository, FanOutRepository } from '@cars/webhook-store';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { resolveDeliveryOptions } from '../config/delivery.options';
import { AttemptOutcome } from './attempt-outcome';
import { DeliveryStore } from './delivery-store';
import { Dispatcher } from './dispatcher.service';
import { Sender } from './sender';

/**
 * The dispatcher with the real store and a sender whose "hanging" receivers answer only when the
 * test lets them: one account's hanging endpoints hold at most the account's slots, another
 * account's endpoint is served meanwhile, and a failed attempt leaves its endpoint one attempt at
 * a time, its queued deliveries back on the schedule without an attempt.
 */
describe('Dispatcher: hanging receivers of one account (PostgreSQL)', () => {
  let close: (() => Promise<void>) | undefined;
  let db: DataSource;
  let pool: Pool;
  const masterKey = generateMasterKey();
  const sealed = SecretCipher.fromEnv(masterKey).encrypt(generateSigningSecret());
  const options = resolveDeliveryOptions({
    databaseUrl: 'unused',
    secretKeys: masterKey,
    concurrency: 8,
    perEndpointConcurrency: 4,
    accountConcurrency: 3,
  });

  /** Hanging attempts in flight, each answered when the test says. */
  const hanging: { url: string; answer: (outcome: AttemptOutcome) => void }[] = [];
  const served: string[] = [];
  const timeout: AttemptOutcome = { succeeded: false, status: null, error: 'timeout', excerpt: null, durationMs: 10_000 };
  /** Once set, the hanging receivers time out at once (so the dispatcher can drain). */
  let released = false;
  const sender = {
    send: (url: string) =>
      url.includes('/hang')
        ? new Promise<AttemptOutcome>((answer) => (released ? answer(timeout) : hanging.push({ url, answer })))
        : Promise.resolve(served.push(url)).then((): AttemptOutcome => ({ succeeded: true, status: 200, error: null, excerpt: null, durationMs: 1 })),
  } as unknown as Sender;

  const waitFor = async (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const endpoint = async (accountId: string, url: string, due: number): Promise<string> => {
    const [{ id }] = await db.query(
      `INSERT INTO webhook_subscriptions (account_id, url, event_types, secret_ciphertext, secret_key_id)
       VALUES ($1, $2, '{auction.created}', $3, $4) RETURNING id`,
      [accountId, url, sealed.ciphertext, sealed.keyId],
    );
    await db.query(
      `INSERT INTO webhook_deliveries (subscription_id, account_id, event_id, event_type, payload, next_attempt_at)
       SELECT $1, $2, 'evt_' || gen_random_uuid(), 'auction.created', '{}', now() - make_interval(secs => 60 - g) FROM generate_series(1, $3) AS g`,
      [id, accountId, due],
    );
    return id;
  };

  beforeAll(async () => {
    ({ dataSource: db, pool, close } = await openIsolatedDatabase('delivery_fair_dispatch', { poolSize: 6 }));
  });

  afterAll(async () => {
    await close?.();
  });

  it('serves another account while one account’s hanging endpoints hold no more than its share, and nothing is lost', async () => {
    const noisy = (await createAccount(pool, { email: 'noisy@example.test', plan: '100k', emailVerified: true })).account.id;
    const quiet = (await createAccount(pool, { email: 'quiet@example.test', plan: '100k', emailVerified: true })).account.id;
    const hangingIds: string[] = [];
    for (let i = 0; i < 3; i += 1) hangingIds.push(await endpoint(noisy, `https://receiver.example/hang${i}`, 10));
    const store = new DeliveryStore(pool, options, new DispatchRepository(), new FanOutRepository());
    const dispatcher = new Dispatcher(store, sender, options);
    dispatcher.wake();
    await waitFor('the noisy account to fill its share', () => hanging.length === 3);

    // The quiet account's endpoint, due later, still goes out at once.
    await endpoint(quiet, 'https://receiver.example/ok', 5);
    dispatcher.wake();
    await waitFor('the quiet endpoint served', () => served.length === 5);
    expect(hanging).toHaveLength(options.accountConcurrency);

    // The hanging attempts time out: their endpoints go down to one attempt at a time, and what
    // they had queued goes back to the schedule without using an attempt.
    for (const attempt of hanging.splice(0)) attempt.answer(timeout);
    await waitFor('the next attempts', () => hanging.length === 3);
    expect(new Set(hanging.map((h) => h.url)).size).toBe(3);
    const noisyRows = async () =>
      (
        await db.query(
          `SELECT count(*) FILTER (WHERE attempts > 0)::int AS attempted, count(*) FILTER (WHERE status = 'sending')::int AS sending
             FROM webhook_deliveries WHERE subscription_id = ANY($1::uuid[])`,
          [hangingIds],
        )
      )[0];
    await waitFor('the failures recorded', async () => (await noisyRows()).attempted === 3);
    // Only the three new attempts are leased: the rest of the queues went back.
    expect(await noisyRows()).toEqual({ attempted: 3, sending: 3 });

    released = true;
    for (const attempt of hanging.splice(0)) attempt.answer(timeout);
    await dispatcher.drain();
    const rows = await db.query(
      `SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE account_id = $1 GROUP BY 1 ORDER BY 1`,
      [noisy],
    );
    expect(rows).toEqual([{ status: 'pending', n: 30 }]);
    expect((await db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE account_id = $1 AND status = 'succeeded'`, [quiet]))[0].n).toBe(5);
  });
});
