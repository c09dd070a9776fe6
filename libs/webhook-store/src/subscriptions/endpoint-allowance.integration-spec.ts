import { createAccount } from '@cars/accounts';
import { withTransaction } from '@cars/persistence';
import { openIsolatedDatabase } from '@cars/testing';
import { Pool } from 'pg';
import { accountsOverEndpointAllowance, pauseEndpointsBeyondAllowance } from './endpoint-allowance';

/** The downgrade rule's SQL against a migrated database of its own. */
describe('endpoint allowance (PostgreSQL)', () => {
  let close: (() => Promise<void>) | undefined;
  let pool: Pool;
  let emails = 0;

  const account = async (plan: '1k' | '10k' | '100k', planExpiresAt: Date | null = null): Promise<string> => {
    emails += 1;
    return (await createAccount(pool, { email: `allowance${emails}@example.test`, plan, emailVerified: true, planExpiresAt })).account.id;
  };
  /** An endpoint created `ageSeconds` ago, with one pending and one succeeded delivery. */
  const endpoint = async (accountId: string, ageSeconds: number, enabled = true): Promise<string> => {
    const { rows: [{ id }] } = await pool.query<{ id: string }>(
      `INSERT INTO webhook_subscriptions (account_id, url, event_types, secret_ciphertext, secret_key_id, enabled, created_at)
       VALUES ($1, 'https://receiver.example/hook', '{auction.created}', 'sealed', 'k1', $3, now() - make_interval(secs => $2))
       RETURNING id`,
      [accountId, ageSeconds, enabled],
    );
    await pool.query(
      `INSERT INTO webhook_deliveries (subscription_id, account_id, event_id, event_type, payload, status, next_attempt_at)
       SELECT $1, $2, 'evt_' || gen_random_uuid(), 'auction.created', '{}', s, CASE WHEN s = 'pending' THEN now() END
         FROM unnest(ARRAY['pending', 'succeeded']) AS s`,
      [id, accountId],
    );
    return id;
  };
  const states = async (accountId: string) =>
    (
      await pool.query<{ id: string; enabled: boolean; statuses: string[] }>(
        `SELECT s.id, s.enabled, array_agg(d.status ORDER BY d.status) AS statuses
           FROM webhook_subscriptions s JOIN webhook_deliveries d ON d.subscription_id = s.id
          WHERE s.account_id = $1 GROUP BY s.id, s.enabled, s.created_at ORDER BY s.created_at`,
        [accountId],
      )
    ).rows;

  beforeAll(async () => {
    ({ pool, close } = await openIsolatedDatabase('webhook_store_allowance'));
  });

  afterAll(async () => {
    await close?.();
  });

  it('pauses the newest active endpoints beyond the allowance and cancels only their pending deliveries', async () => {
    const accountId = await account('100k');
    const oldest = await endpoint(accountId, 40);
    const pausedBefore = await endpoint(accountId, 30, false);
    const middle = await endpoint(accountId, 20);
    const newest = await endpoint(accountId, 10);

    const paused = await withTransaction(pool, (tx) => pauseEndpointsBeyondAllowance(tx, accountId, 1));
    expect(paused.sort()).toEqual([middle, newest].sort());
    expect(await states(accountId)).toEqual([
      { id: oldest, enabled: true, statuses: ['pending', 'succeeded'] },
      { id: pausedBefore, enabled: false, statuses: ['pending', 'succeeded'] },
      { id: middle, enabled: false, statuses: ['canceled', 'succeeded'] },
      { id: newest, enabled: false, statuses: ['canceled', 'succeeded'] },
    ]);
    // Within the allowance, or unlimited: nothing to do.
    expect(await withTransaction(pool, (tx) => pauseEndpointsBeyondAllowance(tx, accountId, 1))).toEqual([]);
    expect(await withTransaction(pool, (tx) => pauseEndpointsBeyondAllowance(tx, accountId, null))).toEqual([]);
  });

  it('finds the accounts over the allowance of the plan in force, an expired plan allowing none', async () => {
    const within = await account('1k');
    await endpoint(within, 10);
    const over = await account('1k');
    await endpoint(over, 20);
    await endpoint(over, 10);
    const lapsed = await account('10k', new Date(Date.now() - 60_000));
    await endpoint(lapsed, 10);

    const found = await accountsOverEndpointAllowance(pool);
    expect([within, over, lapsed].filter((id) => found.includes(id))).toEqual([over, lapsed]);
    expect(await accountsOverEndpointAllowance(pool, over)).toEqual([over]);
    expect(await accountsOverEndpointAllowance(pool, within)).toEqual([]);
  });
});
