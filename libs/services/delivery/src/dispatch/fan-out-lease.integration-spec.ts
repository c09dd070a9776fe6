import { createAccount, getUsage, PlanId, setUsage } from '@cars/accounts';
import { generateMasterKey, generateSigningSecret, SecretCipher } from '@cars/signing';
import { openIsolatedDatabase } from '@cars/testing';
import { DispatchRepository, FanOutRepository } from '@cars/webhook-store';
import { Pool } from 'pg';
import { resolveDeliveryOptions } from '../config/delivery.options';
import { DeliveryStore, Holdings } from './delivery-store';

/**
 * The fan-out leases new deliveries to the worker that runs it, in its own statement, exactly as a
 * claim would have taken them: only healthy endpoints with no due backlog, within the worker's room
 * per endpoint and per account, each holding a unit of allowance — or, without one, waiting.
 */
describe('DeliveryStore.fanOut: new deliveries leased by the fan-out (PostgreSQL)', () => {
  let close: (() => Promise<void>) | undefined;
  let pool: Pool;
  let store: DeliveryStore;
  let seq = 0;
  const masterKey = generateMasterKey();
  const sealed = SecretCipher.fromEnv(masterKey).encrypt(generateSigningSecret());
  // Per endpoint 2 × 2 = 4, per account 3 × 2 = 6.
  const options = resolveDeliveryOptions({
    databaseUrl: 'unused',
    secretKeys: masterKey,
    perEndpointConcurrency: 2,
    accountConcurrency: 3,
    prefetchRounds: 2,
  });
  const nothingHeld: Holdings = { endpoints: new Map(), accounts: new Map() };

  const account = async (plan: PlanId = '100k'): Promise<string> =>
    (await createAccount(pool, { email: `fan-out-${(seq += 1)}@example.test`, plan, emailVerified: true })).account.id;
  const endpoint = async (accountId: string, filters: object = {}): Promise<string> =>
    (
      await pool.query<{ id: string }>(
        `INSERT INTO webhook_subscriptions (account_id, url, event_types, filters, secret_ciphertext, secret_key_id, active_since)
         VALUES ($1, 'https://receiver.example/hook', '{auction.created}', $2, $3, $4, now() - interval '1 hour') RETURNING id`,
        [accountId, JSON.stringify(filters), sealed.ciphertext, sealed.keyId],
      )
    ).rows[0].id;
  const events = async (n: number, make: string | null = 'Porsche'): Promise<string[]> => {
    const ids = Array.from({ length: n }, () => `evt_fan_out_${(seq += 1)}`);
    await pool.query(
      `INSERT INTO events (id, type, api_version, created_at, payload, make, listed_make, source)
       SELECT x.id, 'auction.created', '2026-10-17', now(), json_build_object('id', x.id), $2, 'Porsch', 'bringatrailer'
         FROM unnest($1::text[]) WITH ORDINALITY AS x(id, n) ORDER BY x.n`,
      [ids, make],
    );
    return ids;
  };
  const rowsOf = async (subscription: string) =>
    (
      await pool.query(
        `SELECT event_id, status, waiting_reason, lease_token, reserved_period FROM webhook_deliveries
          WHERE subscription_id = $1 ORDER BY event_id`,
        [subscription],
      )
    ).rows;

  beforeAll(async () => {
    ({ pool, close } = await openIsolatedDatabase('delivery_fan_out_lease', { poolSize: 4 }));
    store = new DeliveryStore(pool, options, new DispatchRepository(), new FanOutRepository());
  });

  afterEach(async () => {
    await pool.query(`UPDATE events SET fanned_out_at = now() WHERE fanned_out_at IS NULL`);
    await pool.query(`UPDATE webhook_subscriptions SET enabled = false`);
  });

  afterAll(async () => {
    await close?.();
  });

  it('leases a healthy, idle endpoint its new deliveries in event order, each holding a unit; the rest wait for a claim', async () => {
    const a = await account();
    const idle = await endpoint(a);
    const failing = await endpoint(a);
    await pool.query(`UPDATE webhook_subscriptions SET consecutive_failures = 2 WHERE id = $1`, [failing]);
    const b = await account();
    const backlogged = await endpoint(b);
    await pool.query(
      `INSERT INTO webhook_deliveries (subscription_id, account_id, event_id, event_type, payload, next_attempt_at)
       VALUES ($1, $2, 'evt_older', 'auction.created', '{}', now() - interval '1 minute')`,
      [backlogged, b],
    );
    const ids = await events(3);

    const { events: marked, deliveries, claimed } = await store.fanOut(500, { total: 100, held: nothingHeld });
    expect({ marked, deliveries }).toEqual({ marked: 3, deliveries: 9 });
    expect(claimed.map((c) => [c.subscriptionId, c.eventId])).toEqual(ids.map((id) => [idle, id]));
    const period = (await getUsage(pool, a)).period;
    expect(claimed.every((c) => c.reservation?.period === period && c.url === 'https://receiver.example/hook')).toBe(true);
    expect(await getUsage(pool, a)).toMatchObject({ used: 0, reserved: 3 });

    const leased = await rowsOf(idle);
    expect(leased.map((r) => r.status)).toEqual(['sending', 'sending', 'sending']);
    expect(leased.map((r) => r.lease_token).sort()).toEqual(claimed.map((c) => c.leaseToken).sort());
    expect(leased.every((r) => r.reserved_period === period)).toBe(true);
    expect((await rowsOf(failing)).map((r) => r.status)).toEqual(['pending', 'pending', 'pending']);
    expect((await rowsOf(backlogged)).map((r) => r.status)).toEqual(['pending', 'pending', 'pending', 'pending']);

    // What was left is claimed as before: the backlog first.
    const rest = await store.claim(100, { endpoints: new Map([[idle, 3]]), accounts: new Map([[a, 3]]) });
    expect(rest.filter((c) => c.subscriptionId === backlogged)[0].eventId).toBe('evt_older');
  });

  it("takes no more than the worker's room, per endpoint, per account and in all", async () => {
    const a = await account();
    const first = await endpoint(a);
    const second = await endpoint(a);
    await events(5);

    // Endpoint room 4 less 3 held; the account's 6 less 3 held: 1 for the first, 2 for the second.
    const held: Holdings = { endpoints: new Map([[first, 3]]), accounts: new Map([[a, 3]]) };
    const { claimed } = await store.fanOut(500, { total: 100, held });
    expect(claimed.filter((c) => c.subscriptionId === first)).toHaveLength(1);
    expect(claimed.filter((c) => c.subscriptionId === second)).toHaveLength(2);

    const c = await account();
    const third = await endpoint(c);
    await events(5);
    const { claimed: capped } = await store.fanOut(500, { total: 2, held: nothingHeld });
    expect(capped.map((d) => d.subscriptionId)).toEqual([third, third]);
    // Without room (a stopping worker), nothing is leased.
    await events(1);
    expect((await store.fanOut(500, null)).claimed).toEqual([]);
    expect((await rowsOf(third)).filter((r) => r.status === 'sending')).toHaveLength(2);
  });

  it('leaves deliveries waiting for a make and, without allowance, lets the leased ones wait unattempted', async () => {
    const a = await account();
    const byMake = await endpoint(a, { make: 'Porsche' });
    await events(1, null);
    const { claimed } = await store.fanOut(500, { total: 100, held: nothingHeld });
    expect(claimed).toEqual([]);
    expect((await rowsOf(byMake)).map((r) => [r.status, r.waiting_reason])).toEqual([['pending', 'make']]);
    await pool.query(`UPDATE webhook_subscriptions SET enabled = false WHERE id = $1`, [byMake]);

    const full = await account('1k');
    const hook = await endpoint(full);
    await setUsage(pool, full, 1_000);
    await events(2);
    const none = await store.fanOut(500, { total: 100, held: nothingHeld });
    expect(none.claimed).toEqual([]);
    expect((await rowsOf(hook)).map((r) => [r.status, r.waiting_reason, r.lease_token, r.reserved_period])).toEqual([
      ['pending', 'allowance', null, null],
      ['pending', 'allowance', null, null],
    ]);
    expect(await getUsage(pool, full)).toMatchObject({ reserved: 0 });
  });
});
