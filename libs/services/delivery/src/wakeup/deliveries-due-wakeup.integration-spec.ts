import { createAccount } from '@cars/accounts';
import { NotifyChannels } from '@cars/contracts';
import { openIsolatedDatabase } from '@cars/testing';
import { Client, Pool } from 'pg';

/**
 * `delivery_wakeup` on new deliveries is for the dispatchers' claims: sent when a delivery due for
 * a claim is inserted, not when every new one was leased by the fan-out or waits for a make.
 */
describe('delivery_wakeup on new deliveries (PostgreSQL)', () => {
  let close: (() => Promise<void>) | undefined;
  let pool: Pool;
  let listener: Client;
  let databaseUrl: string;
  const heard: string[] = [];

  beforeAll(async () => {
    ({ pool, close, url: databaseUrl } = await openIsolatedDatabase('delivery_due_wakeup', { poolSize: 2 }));
    listener = new Client({ connectionString: databaseUrl });
    await listener.connect();
    listener.on('notification', (n) => heard.push(n.payload ?? ''));
    await listener.query(`LISTEN ${NotifyChannels.DeliveryWakeup}`);
  });

  afterAll(async () => {
    await listener?.end();
    await close?.();
  });

  /** What arrives on the channel after the statement commits (a round trip on the listener flushes it). */
  const notifiedBy = async (sql: string, params: unknown[]): Promise<string[]> => {
    heard.length = 0;
    await pool.query(sql, params);
    await listener.query('SELECT 1');
    return [...heard];
  };

  it('wakes the dispatchers for a pending delivery, not for leased or make-waiting ones', async () => {
    const account = (await createAccount(pool, { email: 'wakeup@example.test', plan: '100k', emailVerified: true })).account.id;
    const {
      rows: [{ id: subscription }],
    } = await pool.query<{ id: string }>(
      `INSERT INTO webhook_subscriptions (account_id, url, event_types, secret_ciphertext, secret_key_id)
       VALUES ($1, 'https://receiver.example/hook', '{auction.created}', 'sealed', 'key') RETURNING id`,
      [account],
    );
    const insert = `INSERT INTO webhook_deliveries (subscription_id, account_id, event_id, event_type, payload, next_attempt_at,
                                                    status, lease_token, lease_expires_at, waiting_reason)
                    VALUES ($1, $2, $3, 'auction.created', '{}', now(), $4, $5, $6, $7)`;
    const leased = ['sending', '7a0a3f9e-5d2b-4a57-9b1c-1f2e3d4c5b6a', new Date(Date.now() + 60_000), null];
    expect(await notifiedBy(insert, [subscription, account, 'evt_leased', ...leased])).toEqual([]);
    expect(await notifiedBy(insert, [subscription, account, 'evt_make', 'pending', null, null, 'make'])).toEqual([]);
    expect(await notifiedBy(insert, [subscription, account, 'evt_due', 'pending', null, null, null])).toEqual(['webhook_deliveries']);
  });
});
