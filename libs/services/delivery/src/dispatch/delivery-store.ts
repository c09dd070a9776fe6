import { Inject, Injectable } from '@nestjs/common';
import { billingPeriod, commitUsage, getUsage, planInForce, releaseUsage, Reservation, reserveUnderPlan, reserveUsage } from '@cars/accounts';
import { EventTypes } from '@cars/contracts';
import { KEYED_LOOKUPS, PG_POOL, Sql, withTransaction } from '@cars/persistence';
import { delaysInSeconds, DispatchRepository, DueDeliveryRow, FanOutRepository, RetrySchedule } from '@cars/webhook-store';
import { Pool, PoolClient } from 'pg';
import { DELIVERY_OPTIONS, ResolvedDeliveryOptions } from '../config/delivery.options';
import { circuitOpens, interruptedAttempts } from '../metrics/delivery.metrics';
import { AttemptOutcome } from './attempt-outcome';
import { afterAttempts, AttemptTally, CircuitPolicy, CircuitState } from './circuit';

/** A delivery claimed for one attempt: what is sent, and the lease that lets only this worker record it. */
export interface ClaimedDelivery {
  id: string;
  subscriptionId: string;
  accountId: string;
  eventId: string;
  eventType: string;
  /** The captured envelope: the body of every attempt, byte for byte. */
  payload: string;
  url: string;
  secret: { ciphertext: string; keyId: string };
  /** The previous secret while a rotation's 24 h overlap lasts. */
  previousSecret: { ciphertext: string; keyId: string } | null;
  leaseToken: string;
  /** When the lease runs out at the latest, on this process's clock (ms since the epoch): no attempt starts that it cannot cover. */
  leaseExpiresAt: number;
  /** The unit of allowance held for this attempt (real events only). */
  reservation: Reservation | null;
  /** The one attempt a half-open circuit lets through: its outcome closes or reopens the circuit. */
  probe: boolean;
  /** Attempts the endpoint may have in flight: the full cap, or one while it is failing. */
  inFlightCap: number;
}

/** What this worker already holds (queued or in flight), per endpoint and per account. */
export interface Holdings {
  endpoints: ReadonlyMap<string, number>;
  accounts: ReadonlyMap<string, number>;
  /** Endpoints whose last attempt here failed, maybe not recorded yet: one attempt at a time. */
  failing?: ReadonlySet<string>;
}

/** What recording a batch came to. */
export interface Recorded {
  /** Deliveries recorded (a lost lease means the sweep took the delivery and its unit back). */
  ids: Set<string>;
  /** Endpoints whose circuit is open after the batch: their queued deliveries go back unsent. */
  openCircuits: Set<string>;
}

/**
 * The claim's transaction (and the fan-out's, which probes each endpoint's backlog the same way):
 * each endpoint's range must come from webhook_deliveries_fair_idx in its order, never from another index and a sort of everything the endpoint has due — which the
 * planner may pick when the table's statistics are stale (a new database, a sudden backlog). The
 * sorts that remain (a few hundred rows at most) then look costly enough to JIT-compile: no JIT.
 * Those settings also make the generic plan of a claim look dearer than a custom one, so it was
 * planned again at every call (~1 ms); the generic plan runs no slower: it is forced. Like every
 * transaction here, no sequential scans (`KEYED_LOOKUPS`).
 */
const CLAIM_SETTINGS = [KEYED_LOOKUPS, 'enable_sort = off', 'jit = off', 'plan_cache_mode = force_generic_plan'];

/**
 * The delivery rows are the truth (docs/adr/0006-delivery-from-the-database.md): claims, leases,
 * outcomes and the allowance held by attempts in flight all live in `webhook_deliveries`, so any
 * worker can die at any point and the next sweep puts things right. This class is the worker's unit
 * of work: it composes, in one transaction each, the statements of `DispatchRepository`
 * (libs/webhook-store, the tables' one writer) with the usage ledger of libs/accounts and the
 * circuit decisions of `circuit.ts`.
 */
@Injectable()
export class DeliveryStore {
  private readonly schedule: RetrySchedule;
  private readonly circuitPolicy: CircuitPolicy;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(DELIVERY_OPTIONS) private readonly options: ResolvedDeliveryOptions,
    private readonly dispatch: DispatchRepository,
    private readonly fanOutRepository: FanOutRepository,
  ) {
    this.schedule = { delaysSeconds: delaysInSeconds(options.retryDelaysMs), jitter: options.retryJitter };
    this.circuitPolicy = { failures: options.circuitFailures, backoffMs: options.circuitBackoffMs, maxBackoffMs: options.circuitMaxBackoffMs };
  }

  /**
   * Claims, outcomes and recoveries commit without waiting for the WAL flush: if the database
   * crashes and loses one, the delivery and the ledger lose it together (same transaction), and
   * the delivery is simply attempted again — at least once, charged once. Rows are found by key:
   * no sequential scans (`KEYED_LOOKUPS`).
   */
  private transaction<T>(work: (client: PoolClient) => Promise<T>, settings: readonly string[] = [KEYED_LOOKUPS]): Promise<T> {
    return withTransaction(this.pool, work, { asyncCommit: true, settings });
  }

  private get leaseSeconds(): number {
    return this.options.leaseMs / 1000;
  }

  /** What this worker may hold per endpoint (while it succeeds) and per account: claims and the fan-out's leases alike. */
  private get shares(): { prefetch: number; accountShare: number } {
    return {
      prefetch: this.options.perEndpointConcurrency * this.options.prefetchRounds,
      accountShare: this.options.accountConcurrency * this.options.prefetchRounds,
    };
  }

  /**
   * Claims up to `limit` due deliveries fairly, leases them as `sending` and reserves a unit of
   * allowance for each real event, in one transaction:
   * 1. probes: endpoints whose open circuit's backoff is over — this worker takes their probe;
   * 2. the fair pick, leased by the same statement (`DispatchRepository.claimDueFairly`): per
   *    endpoint a short index range, up to what it may hold (the full prefetch,
   *    `perEndpointConcurrency` × `prefetchRounds`, while it succeeds; one while it is failing or
   *    probed) less what this worker holds of it; endpoints take turns, first attempts before
   *    retries; an account gets at most `accountConcurrency` × `prefetchRounds` less what it holds
   *    here; rows another worker holds are skipped;
   * 3. the allowance, decided per account of the batch (`reserveAllowance`); a delivery whose
   *    account has no allowance left goes back to `pending` and waits (`waiting_reason:
   *    "allowance"`) without using an attempt.
   */
  async claim(limit: number, held: Holdings = { endpoints: new Map(), accounts: new Map() }): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return [];
    const heldEndpoints = [...held.endpoints];
    // Before the transaction: the lease the database sets runs from a later moment than this.
    const claimedAt = Date.now();
    const now = new Date(claimedAt);
    return this.transaction(async (client) => {
      const probes = await this.dispatch.openProbes(client, this.leaseSeconds, heldEndpoints.map(([id]) => id));
      const picked = await this.dispatch.claimDueFairly(client, {
        limit,
        leaseSeconds: this.leaseSeconds,
        period: billingPeriod(now).key,
        freeEventType: EventTypes.WebhookTest,
        probes,
        heldEndpoints,
        heldAccounts: [...held.accounts],
        failing: [...(held.failing ?? [])],
        ...this.shares,
      });
      if (picked.length === 0) return [];
      const periods = await reserveAllowance(client, picked, now);
      const { claimed, waiting } = this.toClaims(picked, periods, claimedAt + this.options.leaseMs);
      await this.dispatch.waitForAllowance(client, waiting);
      return claimed;
    }, CLAIM_SETTINGS);
  }

  /**
   * One fan-out batch (`FanOutRepository.fanOutBatch`) in one transaction. With `room` (what this
   * worker could send at once, from its holdings), the new deliveries of healthy endpoints with no
   * due backlog come back already claimed — leased by the fan-out's own statement, their units of
   * allowance reserved as a claim reserves them — so they need no claim transaction of their own.
   */
  async fanOut(
    batchSize: number,
    room: { total: number; held: Holdings } | null,
  ): Promise<{ events: number; marked: string[]; deliveries: number; claimed: ClaimedDelivery[] }> {
    const claimedAt = Date.now();
    const now = new Date(claimedAt);
    return this.transaction(async (client) => {
      const lease =
        room && room.total > 0
          ? {
              seconds: this.leaseSeconds,
              period: billingPeriod(now).key,
              total: room.total,
              ...this.shares,
              heldEndpoints: [...room.held.endpoints],
              heldAccounts: [...room.held.accounts],
              failing: [...(room.held.failing ?? [])],
            }
          : null;
      const { events, marked, deliveries, leased } = await this.fanOutRepository.fanOutBatch(client, batchSize, lease);
      if (leased.length === 0) return { events, marked, deliveries, claimed: [] };
      const periods = await reserveAllowance(client, leased, now);
      const { claimed, waiting } = this.toClaims(leased, periods, claimedAt + this.options.leaseMs);
      await this.dispatch.waitForAllowance(client, waiting);
      return { events, marked, deliveries, claimed };
    }, CLAIM_SETTINGS);
  }

  /** The leased rows that hold a unit (or need none: tests are free) become claims; the rest wait. */
  private toClaims(
    picked: readonly DueDeliveryRow[],
    periods: ReadonlyMap<string, string>,
    leaseExpiresAt: number,
  ): { claimed: ClaimedDelivery[]; waiting: string[] } {
    const claimed: ClaimedDelivery[] = [];
    const waiting: string[] = [];
    for (const row of picked) {
      let reservation: Reservation | null = null;
      if (row.event_type !== EventTypes.WebhookTest) {
        const period = periods.get(row.id);
        if (!period) {
          waiting.push(row.id);
          continue;
        }
        reservation = { accountId: row.account_id, period, units: 1 };
      }
      claimed.push({
        id: row.id,
        subscriptionId: row.subscription_id,
        accountId: row.account_id,
        eventId: row.event_id,
        eventType: row.event_type,
        payload: row.payload,
        url: row.url,
        secret: { ciphertext: row.secret_ciphertext, keyId: row.secret_key_id },
        previousSecret:
          row.previous_ciphertext && row.previous_key_id ? { ciphertext: row.previous_ciphertext, keyId: row.previous_key_id } : null,
        leaseToken: row.lease_token,
        leaseExpiresAt,
        reservation,
        probe: row.probe,
        inFlightCap: row.failing ? 1 : this.options.perEndpointConcurrency,
      });
    }
    return { claimed, waiting };
  }

  /**
   * Records attempts' outcomes, many in one transaction — only those whose lease this worker still
   * holds. Success commits the unit held (charged once); failure releases it and schedules the
   * next attempt, or ends the delivery `failed` after the last one of its budget; a failure on an
   * endpoint paused meanwhile ends it `canceled`. Endpoint health and circuits follow, in the same
   * transaction: `circuitFailures` failed attempts in a row open an endpoint's circuit for
   * `circuitBackoffMs`; a failed probe reopens it for twice as long as the last time (up to
   * `circuitMaxBackoffMs`); a success closes it.
   */
  async record(results: readonly { delivery: ClaimedDelivery; outcome: AttemptOutcome }[]): Promise<Recorded> {
    if (results.length === 0) return { ids: new Set(), openCircuits: new Set() };
    const allSucceeded = results.every((r) => r.outcome.succeeded);
    return this.transaction(async (client) => {
      const recorded = await this.dispatch.recordOutcomes(
        client,
        results.map(({ delivery, outcome }) => ({
          id: delivery.id,
          leaseToken: delivery.leaseToken,
          succeeded: outcome.succeeded,
          status: outcome.status,
          error: outcome.error,
          excerpt: outcome.excerpt,
          durationMs: outcome.durationMs,
        })),
        this.schedule,
        // The common batch: its endpoints' health is written by the same statement.
        { allSucceeded },
      );
      const mine = results.filter((r) => recorded.has(r.delivery.id));
      await settleUnits(client, mine.map((r) => ({ reservation: r.delivery.reservation, commit: r.outcome.succeeded })));
      const openCircuits = allSucceeded ? new Set<string>() : await this.recordHealth(client, tallyByEndpoint(mine));
      return { ids: recorded, openCircuits };
    });
  }

  /** Endpoint health after a batch: failures since the last success, when each last happened; the circuit. Returns the circuits not closed. */
  private async recordHealth(client: PoolClient, health: ReadonlyMap<string, AttemptTally>): Promise<Set<string>> {
    const openCircuits = new Set<string>();
    if (health.size === 0) return openCircuits;
    // Every endpoint's last attempt succeeded: whatever the row held, the circuit is closed with no
    // failures in a row (`afterAttempts`), so nothing needs reading first.
    if ([...health.values()].every((tally) => tally.succeeded > 0 && tally.tail === 0)) {
      await this.dispatch.writeSucceeded(client, [...health].map(([id, tally]) => ({ id, failed: tally.failed > 0 })));
      return openCircuits;
    }
    const before = await this.dispatch.lockHealth(client, [...health.keys()].sort());
    const after = before.map((row) => ({
      id: row.id,
      tally: health.get(row.id)!,
      ...afterAttempts(
        { consecutiveFailures: row.consecutive_failures, state: row.circuit_state as CircuitState, opens: row.circuit_opens },
        health.get(row.id)!,
        this.circuitPolicy,
      ),
    }));
    await this.dispatch.writeHealth(
      client,
      after.map((c) => ({
        id: c.id,
        consecutiveFailures: c.consecutiveFailures,
        succeeded: c.tally.succeeded > 0,
        failed: c.tally.failed > 0,
        state: c.state,
        openForSeconds: c.openForMs === null ? null : c.openForMs / 1000,
        opens: c.opens,
      })),
    );
    for (const c of after) if (c.state !== 'closed') openCircuits.add(c.id);
    circuitOpens.inc(after.filter((c) => c.openForMs !== null).length);
    return openCircuits;
  }

  /** Claimed deliveries never sent (a stop): back to the schedule as they were, their units released. */
  async unclaim(deliveries: readonly ClaimedDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    await this.transaction(async (client) => {
      const back = await this.dispatch.unlease(client, deliveries.map((d) => ({ id: d.id, token: d.leaseToken })));
      await settleUnits(
        client,
        deliveries.filter((d) => back.has(d.id)).map((d) => ({ reservation: d.reservation, commit: false })),
      );
      // A probe never sent: the circuit is open again, its probe due at once.
      await this.dispatch.reopenUnsentProbes(client, deliveries.filter((d) => d.probe && back.has(d.id)).map((d) => d.subscriptionId));
    });
  }

  /**
   * Attempts whose lease expired (their worker died or hung): counted as a failed attempt
   * (`interrupted`) and scheduled like one, their unit of allowance released.
   */
  async recoverExpired(): Promise<number> {
    const recovered = await this.transaction(async (client) => {
      const rows = await this.dispatch.recoverExpired(client, this.schedule);
      for (const row of rows) {
        if (row.reserved_period) {
          await releaseUsage(client, { accountId: row.account_id, period: row.reserved_period, units: 1 });
        }
      }
      return rows.length;
    });
    interruptedAttempts.inc(recovered);
    return recovered;
  }

  /**
   * Deliveries waiting on an exhausted allowance go back to the schedule (in their original order)
   * for every account that has room again — an upgrade, or a new billing period.
   */
  async releaseAllowanceWaits(onlyAccount?: string): Promise<number> {
    let released = 0;
    for (const accountId of await this.dispatch.accountsWaitingForAllowance(this.pool, onlyAccount)) {
      const inForce = await planInForce(this.pool, accountId);
      if (!inForce) continue;
      const usage = await getUsage(this.pool, accountId);
      const room = inForce.plan.monthlyLimit - usage.used - usage.reserved;
      if (room <= 0) continue;
      released += await this.dispatch.releaseAllowanceWaits(this.pool, accountId, room);
    }
    return released;
  }

  /** Make maintenance decided (deliveries waiting for an unknown make): see `DispatchRepository.resolveMakeWaits`. */
  async resolveMakeWaits(): Promise<{ released: number; dropped: number }> {
    // Maintenance over every waiting delivery: the planner's choice, sequential scans included.
    return this.transaction((client) => this.dispatch.resolveMakeWaits(client), []);
  }

  /** For tests and readiness: deliveries due now. */
  async dueCount(client: Sql = this.pool): Promise<number> {
    return this.dispatch.dueCount(client);
  }
}

/** Attempts per endpoint: successes, failures, the failures after the last success, a failed probe. */
function tallyByEndpoint(attempts: readonly { delivery: ClaimedDelivery; outcome: AttemptOutcome }[]): Map<string, AttemptTally> {
  const health = new Map<string, AttemptTally>();
  for (const { delivery, outcome } of attempts) {
    const h = health.get(delivery.subscriptionId) ?? { succeeded: 0, failed: 0, tail: 0, probeFailed: false };
    if (outcome.succeeded) {
      h.succeeded += 1;
      h.tail = 0;
    } else {
      h.failed += 1;
      h.tail += 1;
      if (delivery.probe) h.probeFailed = true;
    }
    health.set(delivery.subscriptionId, h);
  }
  return health;
}

/** How often a batch's reservation for one account is tried again when others took the room it saw (then its rows wait). */
const RESERVE_TRIES = 3;

/**
 * The allowance, decided per account of the claimed batch (tests are free): the plan in force
 * and one reservation for all the account's rows, in one statement when there is room
 * (`reserveUnderPlan`). Near the end of an
 * allowance, the room left is read once and reserved at once for the account's first rows (in
 * the claim's order); the rest wait. Should others take that room meanwhile, the room is read
 * again (a few times at most; then the rows wait, and the next sweep releases them if room
 * remains). Returns the billing period of the unit each delivery holds.
 */
async function reserveAllowance(client: PoolClient, picked: readonly DueDeliveryRow[], now: Date): Promise<Map<string, string>> {
  const byAccount = new Map<string, DueDeliveryRow[]>();
  for (const row of picked) {
    if (row.event_type === EventTypes.WebhookTest) continue;
    const accountRows = byAccount.get(row.account_id);
    if (accountRows) accountRows.push(row);
    else byAccount.set(row.account_id, [row]);
  }
  const periods = new Map<string, string>();
  for (const [accountId, accountRows] of byAccount) {
    // The common case in one statement: the plan's limit read and all the rows' units reserved.
    const first = await reserveUnderPlan(client, { accountId, units: accountRows.length, now });
    if (!first) continue;
    if (first.reservation) {
      for (const row of accountRows) periods.set(row.id, first.reservation.period);
      continue;
    }
    const limit = first.limit;
    let units = accountRows.length;
    for (let tries = 0; units > 0 && tries < RESERVE_TRIES; tries += 1) {
      const reserved = await reserveUsage(client, { accountId, limit, units, now });
      if (reserved.ok) {
        for (const row of accountRows.slice(0, units)) periods.set(row.id, reserved.reservation.period);
        break;
      }
      const usage = await getUsage(client, accountId, now);
      units = Math.min(accountRows.length, limit - usage.used - usage.reserved);
    }
  }
  return periods;
}

/**
 * The units held by attempts: committed (success) or released, summed per account and period and
 * taken in a fixed order, so concurrent batches take the ledger rows in the same order.
 */
async function settleUnits(client: PoolClient, held: readonly { reservation: Reservation | null; commit: boolean }[]): Promise<void> {
  const units = new Map<string, { reservation: Reservation; commit: number; release: number }>();
  for (const { reservation, commit } of held) {
    if (!reservation) continue;
    const key = `${reservation.accountId}|${reservation.period}`;
    const entry = units.get(key) ?? { reservation, commit: 0, release: 0 };
    if (commit) entry.commit += 1;
    else entry.release += 1;
    units.set(key, entry);
  }
  for (const [, { reservation, commit, release }] of [...units].sort(([a], [b]) => a.localeCompare(b))) {
    if (commit > 0) await commitUsage(client, { ...reservation, units: commit });
    if (release > 0) await releaseUsage(client, { ...reservation, units: release });
  }
}
