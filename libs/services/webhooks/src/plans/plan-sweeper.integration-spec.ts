import { createAccount, setPlan } from '@cars/accounts';
import { openIsolatedDatabase } from '@cars/testing';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { PlanSweeper } from './plan-sweeper';

const HOUR_MS = 3_600_000;

/**
 * A plan change is announced, not applied by the accounts code: the `accounts` row's update
 * notifies `account_changes`, and the webhooks service pauses what the new plan no longer allows.
 * The sweep runs hourly here, so only the notification can pause the endpoints in time.
 */
describe('PlanSweeper: plan changes heard on account_changes (PostgreSQL)', () => {
  let close: (() => Promise<void>) | undefined;
  let db: DataSource;
  let pool: Pool;
  let sweeper: PlanSweeper | undefined;
  let emails = 0;

  const account = async (plan: '10k' | '100k'): Promise<string> => {
    emails += 1;
    return (await createAccount(pool, { email: `plans${emails}@example.test`, plan, emailVerified: true })).account.id;
  };
  /** An endpoint created `ageSeconds` ago, with one pending delivery. */
  const endpoint = async (accountId: string, ageSeconds: number): Promise<{ id: string; delivery: string }> => {
    const { rows: [{ id }] } = await pool.query<{ id: string }>(
      `INSERT INTO webhook_subscriptions (account_id, url, event_types, secret_ciphertext, secret_key_id, created_at)
       VALUES ($1, 'https://receiver.example/hook', '{auction.created}', 'sealed', 'k1', now() - make_interval(secs => $2))
       RETURNING id`,
      [accountId, ageSeconds],
    );
    const { rows: [{ id: delivery }] } = await pool.query<{ id: string }>(
      `INSERT INTO webhook_deliveries (subscription_id, account_id, event_id, event_type, payload, next_attempt_at)
       VALUES ($1, $2, 'evt_' || gen_random_uuid(), 'auction.created', '{}', now() + interval '1 hour') RETURNING id`,
      [id, accountId],
    );
    return { id, delivery };
  };
  const states = async (accountId: string) =>
    (
      await pool.query<{ enabled: boolean; status: string }>(
        `SELECT s.enabled, d.status FROM webhook_subscriptions s JOIN webhook_deliveries d ON d.subscription_id = s.id
          WHERE s.account_id = $1 ORDER BY s.created_at`,
        [accountId],
      )
    ).rows;
  /** Polls until `done` holds or 5 s pass; returns the last states. */
  const eventually = async (accountId: string, done: (rows: { enabled: boolean; status: string }[]) => boolean) => {
    const deadline = Date.now() + 5_000;
    let rows = await states(accountId);
    while (!done(rows) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      rows = await states(accountId);
    }
    return rows;
  };

  beforeAll(async () => {
    ({ dataSource: db, pool, close } = await openIsolatedDatabase('webhooks_plan_changes'));
  });

  afterEach(async () => {
    await sweeper?.onApplicationShutdown();
    sweeper = undefined;
  });

  afterAll(async () => {
    await close?.();
  });

  const listening = async (): Promise<PlanSweeper> => {
    const started = new PlanSweeper(pool, db, { secretKeys: 'unused', planSweepIntervalMs: HOUR_MS });
    await started.onApplicationBootstrap();
    return started;
  };

  it('pauses the newest endpoints beyond the new plan and cancels their pending work, at once', async () => {
    sweeper = await listening();
    const accountId = await account('100k');
    await endpoint(accountId, 30);
    await endpoint(accountId, 20);
    await endpoint(accountId, 10);
    await setPlan(pool, { accountId, plan: '1k' });
    expect(await eventually(accountId, (rows) => rows.filter((r) => !r.enabled).length === 2)).toEqual([
      { enabled: true, status: 'pending' },
      { enabled: false, status: 'canceled' },
      { enabled: false, status: 'canceled' },
    ]);
  });

  it('the sweep pauses what a plan lapsing by time, or a missed notification, left over', async () => {
    const accountId = await account('10k');
    await endpoint(accountId, 20);
    await endpoint(accountId, 10);
    // Nobody listening: the change goes unheard.
    await pool.query(`UPDATE accounts SET plan_expires_at = now() - interval '1 second' WHERE id = $1`, [accountId]);
    const unheard = new PlanSweeper(pool, db, { secretKeys: 'unused', planSweepIntervalMs: HOUR_MS });
    expect(await states(accountId)).toEqual([
      { enabled: true, status: 'pending' },
      { enabled: true, status: 'pending' },
    ]);
    expect(await unheard.sweep()).toBe(2);
    expect(await states(accountId)).toEqual([
      { enabled: false, status: 'canceled' },
      { enabled: false, status: 'canceled' },
    ]);
  });
});
