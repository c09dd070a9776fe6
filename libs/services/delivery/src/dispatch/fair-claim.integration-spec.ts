import { createAccount, getUsage, setUsedUnits } from '@cars/accounts';
import { renderMetrics } from '@cars/metrics';
import { createDataSource, pgPoolOf } from '@cars/persistence';
import { createIsolatedDatabase, truncate } from '@cars/testing';
import { DispatchRepository, FanOutRepository } from '@cars/webhook-store';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { resolveDeliveryOptions } from '../config/delivery.options';
import { DeliveryBacklogMetrics } from '../metrics/delivery.metrics';
import { AttemptOutcome } from './attempt-outcome';
import { ClaimedDelivery, DeliveryStore } from './delivery-store';

/** Prefetch per endpoint: 2 in flight × 4 rounds; per account: 3 × 4. */
const PER_ENDPOINT = 8;
const PER_ACCOUNT = 12;
const BACKOFF_MS = 300;

/**
 * The claim's fairness and the endpoint circuit, against a migrated database of its own: which due
 * deliveries a claim takes, in what order, what each endpoint and account may hold, and how an
 * endpoint that keeps failing is backed off as a whole — its deliveries waiting, none lost.
 */
describe('DeliveryStore: fair claims and endpoint circuits (PostgreSQL)', () => {
  let drop: (() => Promise<void>) | undefined;
  let db: DataSource;
  let pool: Pool;
  let store: DeliveryStore;
  let emails = 0;

  const options = resolveDeliveryOptions({
    databaseUrl: 'unused',
    secretKeys: 'unused',
    perEndpointConcurrency: 2,
    accountConcurrency: 3,
    prefetchRounds: 4,
    circuitFailures: 3,
    circuitBackoffMs: BACKOFF_MS,
    circuitMaxBackoffMs: 10_000,
  });

  const account = async (): Promise<string> => {
    emails += 1;
    return (await createAccount(pool, { email: `fair${emails}@example.test`, plan: '100k', emailVerified: true })).account.id;
  };
  const endpoint = async (accountId: string): Promise<string> =>
    (
      await db.query(
        `INSERT INTO webhook_subscriptions (account_id, url, event_types, secret_ciphertext, secret_key_id)
         VALUES ($1, 'https://receiver.example/hook', '{auction.created}', 'sealed', 'k1') RETURNING id`,
        [accountId],
      )
    )[0].id;
  /** `n` due deliveries of the endpoint, due `ageSeconds` ago and up to a second before, oldest first, each with `attempts` made. */
  const deliveries = async (subscriptionId: string, accountId: string, n: number, { ageSeconds = 0, attempts = 0 } = {}) => {
    await db.query(
      `INSERT INTO webhook_deliveries (subscription_id, account_id, event_id, event_type, payload, attempts, next_attempt_at, created_at)
       SELECT $1, $2, 'evt_' || gen_random_uuid(), 'auction.created', '{}', $4,
              now() - make_interval(secs => $5::float8 + 1 - g::float8 / $3), now() - make_interval(secs => $5::float8 + 61 - g::float8 / $3)
         FROM generate_series(1, $3) AS g`,
      [subscriptionId, accountId, n, attempts, ageSeconds],
    );
  };
  const bySubscription = (claimed: ClaimedDelivery[]) => {
    const counts = new Map<string, number>();
    for (const c of claimed) counts.set(c.subscriptionId, (counts.get(c.subscriptionId) ?? 0) + 1);
    return counts;
  };
  const outcome = (succeeded: boolean): AttemptOutcome =>
    succeeded
      ? { succeeded, status: 200, error: null, excerpt: null, durationMs: 3 }
      : { succeeded, status: null, error: 'connect_error', excerpt: null, durationMs: 3 };
  const circuitOf = async (id: string) =>
    (
      await db.query(
        `SELECT circuit_state, circuit_opens, consecutive_failures, circuit_opened_at,
                (extract(epoch FROM circuit_open_until - now()) * 1000)::float8 AS open_for_ms
           FROM webhook_subscriptions WHERE id = $1`,
        [id],
      )
    )[0];
  const metric = async (series: string): Promise<number> => {
    const { body } = await renderMetrics();
    const line = body.split('\n').find((l) => l.startsWith(`${series} `));
    return line ? Number(line.slice(series.length + 1)) : NaN;
  };
  /** Claims until one of the endpoint's deliveries comes, within a deadline (the backoff is short). */
  const claimWhenDue = async (subscriptionId: string, timeoutMs = 5000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const claimed = await store.claim(50);
      const mine = claimed.filter((c) => c.subscriptionId === subscriptionId);
      await store.unclaim(claimed.filter((c) => c.subscriptionId !== subscriptionId));
      if (mine.length > 0 || Date.now() > deadline) return mine;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };

  beforeAll(async () => {
    const database = await createIsolatedDatabase('delivery_fair_claim');
    drop = database.drop;
    db = await createDataSource({ url: database.url, poolSize: 6, applicationName: 'test' }).initialize();
    pool = pgPoolOf(db);
    store = new DeliveryStore(pool, options, new DispatchRepository(), new FanOutRepository());
  });

  beforeEach(async () => {
    await truncate(db, 'webhook_deliveries', 'webhook_subscriptions', 'usage_ledger');
  });

  afterAll(async () => {
    await db?.destroy();
    await drop?.();
  });

  it("claims a quiet endpoint's fresh delivery at once, whatever another endpoint's backlog of older due ones", async () => {
    const noisy = await account();
    const backlogged = await endpoint(noisy);
    await deliveries(backlogged, noisy, 3000, { ageSeconds: 3600 });
    await deliveries(backlogged, noisy, 2000, { ageSeconds: 1800, attempts: 1 });
    const quiet = await account();
    const fresh = await endpoint(quiet);
    await deliveries(fresh, quiet, 1);

    const claimed = await store.claim(4);
    expect(bySubscription(claimed).get(fresh)).toBe(1);
    // The backlogged endpoint takes no more than its own prefetch, less what this worker holds of it.
    const held = bySubscription(claimed).get(backlogged)!;
    const more = await store.claim(100, { endpoints: new Map([[backlogged, held]]), accounts: new Map([[noisy, held]]) });
    expect(more.map((c) => c.subscriptionId)).toEqual(Array(PER_ENDPOINT - held).fill(backlogged));
  });

  it("gives one account's many endpoints at most the account's share, and each endpoint its own", async () => {
    const many = await account();
    const endpoints = [];
    for (let i = 0; i < 6; i += 1) {
      endpoints.push(await endpoint(many));
      await deliveries(endpoints[i], many, 20, { ageSeconds: 600 });
    }
    const other = await account();
    const single = await endpoint(other);
    await deliveries(single, other, 20);

    const claimed = await store.claim(200);
    const counts = bySubscription(claimed);
    expect(claimed.filter((c) => c.accountId === many)).toHaveLength(PER_ACCOUNT);
    expect(Math.max(...endpoints.map((id) => counts.get(id) ?? 0))).toBeLessThanOrEqual(PER_ENDPOINT);
    // Endpoints take turns within the share: six endpoints, twelve deliveries, two each.
    expect(endpoints.map((id) => counts.get(id))).toEqual([2, 2, 2, 2, 2, 2]);
    expect(counts.get(single)).toBe(PER_ENDPOINT);

    // What this worker already holds counts against the share.
    const held = {
      endpoints: new Map([...counts]),
      accounts: new Map([[many, PER_ACCOUNT - 1], [other, PER_ENDPOINT]]),
    };
    const more = await store.claim(200, held);
    expect(more.map((c) => c.accountId)).toEqual([many]);
  });

  it('near the end of an allowance, claims what the room left allows, oldest first, and the rest wait unattempted', async () => {
    emails += 1;
    const low = (await createAccount(pool, { email: `fair${emails}@example.test`, plan: '1k', emailVerified: true })).account.id;
    await setUsedUnits(pool, low, 997);
    const hook = await endpoint(low);
    await deliveries(hook, low, 5, { ageSeconds: 60 });
    const oldest: { id: string }[] = await db.query(`SELECT id FROM webhook_deliveries WHERE subscription_id = $1 ORDER BY next_attempt_at`, [hook]);

    const claimed = await store.claim(10);
    expect(claimed.map((c) => c.id)).toEqual(oldest.slice(0, 3).map((r) => r.id));
    expect(claimed.every((c) => c.reservation?.units === 1)).toBe(true);
    expect(await getUsage(pool, low)).toMatchObject({ used: 997, reserved: 3 });
    expect(
      await db.query(
        `SELECT status, waiting_reason, attempts, count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1
          GROUP BY 1, 2, 3 ORDER BY 1`,
        [hook],
      ),
    ).toEqual([
      { status: 'pending', waiting_reason: 'allowance', attempts: 0, n: 2 },
      { status: 'sending', waiting_reason: null, attempts: 0, n: 3 },
    ]);
  });

  it('claims due first attempts before due retries, across endpoints and within one', async () => {
    const a = await account();
    const retrying = await endpoint(a);
    await deliveries(retrying, a, 30, { ageSeconds: 3600, attempts: 2 });
    await deliveries(retrying, a, 2, { ageSeconds: 1 });
    const b = await account();
    const fresh = await endpoint(b);
    await deliveries(fresh, b, 3);

    const claimed = await store.claim(5);
    expect(claimed).toHaveLength(5);
    const [{ retries }] = await db.query(`SELECT count(*)::int AS retries FROM webhook_deliveries WHERE id = ANY($1::uuid[]) AND attempts > 0`, [
      claimed.map((c) => c.id),
    ]);
    expect({ retries, counts: Object.fromEntries(bySubscription(claimed)) }).toEqual({ retries: 0, counts: { [retrying]: 2, [fresh]: 3 } });
  });

  it('opens the circuit after failures in a row, claims nothing while open, probes once, reopens longer, closes on success', async () => {
    const owner = await account();
    const failing = await endpoint(owner);
    await deliveries(failing, owner, 10, { ageSeconds: 60 });
    const opensBefore = await metric('webhook_endpoint_circuit_opens_total');

    // Three failed attempts in a row (the threshold): the circuit opens, the rest go back unsent.
    const first = await store.claim(50);
    expect(first).toHaveLength(PER_ENDPOINT);
    const recorded = await store.record(first.slice(0, 3).map((delivery) => ({ delivery, outcome: outcome(false) })));
    expect([...recorded.openCircuits]).toEqual([failing]);
    await store.unclaim(first.slice(3));
    const opened = await circuitOf(failing);
    expect(opened).toMatchObject({ circuit_state: 'open', circuit_opens: 1, consecutive_failures: 3 });
    expect(opened.circuit_opened_at).not.toBeNull();
    expect(opened.open_for_ms).toBeGreaterThan(BACKOFF_MS - 100);
    expect(opened.open_for_ms).toBeLessThanOrEqual(BACKOFF_MS);
    expect((await metric('webhook_endpoint_circuit_opens_total')) - opensBefore).toBe(1);
    const metrics = new DeliveryBacklogMetrics(pool);
    metrics.onModuleInit();
    expect(await metric('webhook_endpoint_circuits{state="open"}')).toBe(1);

    // Open: its seven due deliveries wait, using no attempt.
    expect(await store.claim(50)).toEqual([]);

    // After the backoff: one probe, and nothing else of the endpoint while it is in flight.
    const probe = await claimWhenDue(failing);
    expect(probe.map((c) => ({ probe: c.probe, cap: c.inFlightCap }))).toEqual([{ probe: true, cap: 1 }]);
    expect(await circuitOf(failing)).toMatchObject({ circuit_state: 'half_open' });
    expect(await store.claim(50)).toEqual([]);
    expect(await metric('webhook_endpoint_circuits{state="half_open"}')).toBe(1);

    // The probe fails: open again, twice as long.
    await store.record([{ delivery: probe[0], outcome: outcome(false) }]);
    const reopened = await circuitOf(failing);
    expect(reopened).toMatchObject({ circuit_state: 'open', circuit_opens: 2, consecutive_failures: 4, circuit_opened_at: opened.circuit_opened_at });
    expect(reopened.open_for_ms).toBeGreaterThan(2 * BACKOFF_MS - 100);
    expect((await metric('webhook_endpoint_circuit_opens_total')) - opensBefore).toBe(2);

    // The next probe succeeds: closed, and the endpoint gets its full share again.
    const second = await claimWhenDue(failing, 5000);
    expect(second.map((c) => c.probe)).toEqual([true]);
    const closing = await store.record([{ delivery: second[0], outcome: outcome(true) }]);
    expect(closing.openCircuits.size).toBe(0);
    expect(await circuitOf(failing)).toMatchObject({ circuit_state: 'closed', circuit_opens: 0, consecutive_failures: 0, circuit_opened_at: null, open_for_ms: null });
    expect(await metric('webhook_endpoint_circuits{state="closed"}')).toBe(1);
    const after = await store.claim(50);
    expect(after.map((c) => ({ probe: c.probe, cap: c.inFlightCap }))).toEqual(Array(5).fill({ probe: false, cap: 2 }));
    await store.unclaim(after);

    // Nothing lost: one delivered, the four failed attempts rescheduled, the rest never attempted.
    const rows = await db.query(
      `SELECT status, attempts, count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1 GROUP BY 1, 2 ORDER BY 1, 2`,
      [failing],
    );
    expect(rows).toEqual([
      { status: 'pending', attempts: 0, n: 5 },
      { status: 'pending', attempts: 1, n: 4 },
      { status: 'succeeded', attempts: 1, n: 1 },
    ]);
  });

  it('lets one worker only take the probe of a circuit whose backoff is over', async () => {
    const owner = await account();
    const failing = await endpoint(owner);
    await deliveries(failing, owner, 5);
    await db.query(`UPDATE webhook_subscriptions SET circuit_state = 'open', circuit_open_until = now(), circuit_opens = 1 WHERE id = $1`, [failing]);
    const other = new DeliveryStore(pool, options, new DispatchRepository(), new FanOutRepository());
    const [a, b] = await Promise.all([store.claim(50), other.claim(50)]);
    expect([...a, ...b].map((c) => c.probe)).toEqual([true]);
  });

  it('never fails a delivery for waiting on an open circuit: its last attempt stays for after the backoff', async () => {
    const owner = await account();
    const failing = await endpoint(owner);
    await deliveries(failing, owner, 1, { ageSeconds: 7200, attempts: 5 });
    await db.query(
      `UPDATE webhook_subscriptions SET circuit_state = 'open', circuit_open_until = now() + interval '1 hour', circuit_opens = 3,
              circuit_opened_at = now() WHERE id = $1`,
      [failing],
    );
    expect(await store.claim(50)).toEqual([]);
    await store.recoverExpired();
    expect(await db.query(`SELECT status, attempts, max_attempts FROM webhook_deliveries WHERE subscription_id = $1`, [failing])).toEqual([
      { status: 'pending', attempts: 5, max_attempts: 6 },
    ]);
  });
});
