import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { billingPeriod, createLedgerPool, effectivePlan, LedgerPool, leaseUsageBatch, releaseExpiredLeases, settleLeases } from '@cars/accounts';
import { ServiceUnavailableError } from '@cars/messaging';
import { connectionUrlOf } from '@cars/persistence';
import { hostname } from 'node:os';
import { DataSource } from 'typeorm';
import { allowanceRejections, expiredLeaseUnitsReleased, meteringStatements, reportLeaseHoldings } from '../metrics/gateway.metrics';
import type { ApiPrincipal, MeterTicket } from '../http/request-context';
import { monthlyLimitExceeded } from './admission.errors';
import { API_ACCESS_CONFIG, ApiAccessConfig } from './api-access.config';
import { errorMessage } from '@cars/contracts';
import { LeaseBook, LeaseRetired, LeaseTake } from './lease-book';
import { LedgerBatches } from './ledger-batches';

export type { MeterTicket } from '../http/request-context';

/** How often the lease book settles, renews and closes idle leases, and grants asked for ahead go to the ledger. */
const TICK_MS = 50;
/** Settlements (and closes) go to the ledger every this many ticks, all of them in one statement. */
const SETTLE_EVERY_TICKS = 5;
/** Near the account's limit, a lease unused this long gives its units back (see `LeaseBook`). */
const NEAR_LIMIT_IDLE_MS = 250;
/** A settlement of spent units at least this often per lease in use (what the overview trails by). */
const SETTLE_MS = 1000;
/** A grant asked for within this long of the previous one asks for a block twice as large. */
const HOT_MS = 1000;
/** A grant takes at most this share (1/n) of the room left in the allowance. */
const SHARE_OF_ROOM = 4;

/**
 * A counted request takes one unit of allowance before its handler runs and, once the outcome is
 * known, spends it (the request counts) or gives it back (it must not). The units come from a
 * lease: a block the gateway reserved in the ledger in one statement (`LeaseBook`; see
 * docs/adr/0007-metering-leases.md for what the ledger shows meanwhile and what a crash costs).
 * The ledger statements go through a ledger pool of their own with asynchronous commit (see
 * `createLedgerPool` for what that trades), to the database of the process's DataSource.
 */
@Injectable()
export class UsageMeter implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Metering');
  private pool?: LedgerPool;
  private book?: LeaseBook;
  private batches?: LedgerBatches;
  private ticks = 0;
  private timer?: NodeJS.Timeout;
  private unreport?: () => void;
  private lastSweep = 0;
  /** When a refused take last swept the account's expired leases (at most once a second each). */
  private readonly refusedSweeps = new Map<string, number>();
  private readonly holder = `${hostname()}:${process.pid}`;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(API_ACCESS_CONFIG) private readonly config: ApiAccessConfig,
  ) {}

  onModuleInit(): void {
    if (!this.config.enabled) return;
    const pool = createLedgerPool(connectionUrlOf(this.dataSource), {
      max: this.config.meteringPoolSize,
      applicationName: 'gateway-ledger',
    });
    this.pool = pool;
    const ttlMs = this.config.leaseTtlMs;
    this.batches = new LedgerBatches({
      grant: (requests) => {
        meteringStatements.inc({ statement: 'grant' });
        return leaseUsageBatch(pool, requests, { shareOfRoom: SHARE_OF_ROOM, ttlMs, holder: this.holder });
      },
      settle: (settlements) => {
        meteringStatements.inc({ statement: settlements.every((s) => s.close) ? 'close' : 'settle' });
        return settleLeases(pool, settlements);
      },
    });
    this.book = new LeaseBook(
      this.batches,
      {
        maxUnits: this.config.leaseMaxUnits,
        ttlMs,
        idleMs: this.config.leaseIdleMs,
        nearLimitIdleMs: Math.min(NEAR_LIMIT_IDLE_MS, this.config.leaseIdleMs),
        // Below this much room the ledger's grants shrink under a full block (a share of the room).
        nearLimitUnits: this.config.leaseMaxUnits * SHARE_OF_ROOM,
        settleMs: Math.min(SETTLE_MS, ttlMs / 4),
        hotMs: HOT_MS,
      },
      () => Date.now(),
      (what, error) => this.logger.error(`could not ${what} a lease of allowance: ${errorMessage(error)}`),
    );
    const book = this.book;
    this.unreport = reportLeaseHoldings(() => book.holdings());
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.batches?.flushAlways();
    await this.book?.closeAll();
    this.unreport?.();
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end();
  }

  private get leases(): LeaseBook {
    if (!this.book) throw new Error('UsageMeter used while metering is off or after shutdown');
    return this.book;
  }

  /**
   * Takes one unit, or throws the 429 of an exhausted allowance (503 if the ledger is unreachable).
   * A unit free in the account's lease here is taken at once (no promise: the common case on
   * every counted request); otherwise the lease waits for the ledger.
   */
  reserve(principal: ApiPrincipal, now = new Date()): MeterTicket | Promise<MeterTicket> {
    const plan = effectivePlan(principal, now);
    const period = billingPeriod(now);
    const served = this.book?.takeNow(principal.accountId, period.key, plan.monthlyLimit);
    if (served?.ok) return this.ticketFor(principal, served.take);
    return this.reserveFromLedger(principal, now);
  }

  private async reserveFromLedger(principal: ApiPrincipal, now: Date): Promise<MeterTicket> {
    const plan = effectivePlan(principal, now);
    const period = billingPeriod(now);
    let result;
    for (let attempt = 0; ; attempt += 1) {
      try {
        result = await this.leases.take(principal.accountId, period.key, period.end, plan.monthlyLimit);
        // Used up: units a dead gateway's expired lease still holds come back first.
        if (!result.ok && attempt === 0 && this.maySweepFor(principal.accountId) && (await this.sweep(principal.accountId)) > 0) continue;
        break;
      } catch (error) {
        if (error instanceof LeaseRetired && attempt < 3) continue;
        this.logger.error(`usage ledger unavailable: ${errorMessage(error)}`);
        throw new ServiceUnavailableError('usage accounting', error);
      }
    }
    if (!result.ok) {
      allowanceRejections.inc({ cause: 'monthly' });
      throw monthlyLimitExceeded(plan, rateLimitHeaders(result.limit, 0, result.periodEnd));
    }
    return this.ticketFor(principal, result.take);
  }

  private ticketFor(principal: ApiPrincipal, take: LeaseTake): MeterTicket {
    return new LeaseTicket(principal.accountId, take);
  }

  /**
   * Spends (`counted`) or gives back the unit, once. The spent unit reaches the ledger's `used`
   * with the lease's next settlement (within a second, or when the lease closes); it is held in
   * `reserved` until then, so the limit is exact meanwhile.
   */
  settle(ticket: MeterTicket, counted: boolean): void {
    if (ticket.settled) return;
    ticket.settled = true;
    if (ticket instanceof LeaseTicket) this.leases.give(ticket.take, counted);
  }

  /** Resolves once every ledger statement started so far has ended (those waiting for a tick are sent now). */
  async settled(): Promise<void> {
    this.batches?.flush(true);
    await this.book?.idle();
  }

  private tick(): void {
    const book = this.book;
    if (!book) return;
    book.tick();
    this.ticks += 1;
    this.batches!.flush(this.ticks % SETTLE_EVERY_TICKS === 0);
    // Leases of dead gateways, swept by every gateway a few times per TTL.
    const now = Date.now();
    for (const [accountId, at] of this.refusedSweeps) if (now - at >= 1000) this.refusedSweeps.delete(accountId);
    if (now - this.lastSweep < this.config.leaseTtlMs / 3) return;
    this.lastSweep = now;
    void this.sweep().catch((error: unknown) => this.logger.error(`could not sweep expired leases: ${errorMessage(error)}`));
  }

  private maySweepFor(accountId: string): boolean {
    const now = Date.now();
    if (now - (this.refusedSweeps.get(accountId) ?? 0) < 1000) return false;
    this.refusedSweeps.set(accountId, now);
    return true;
  }

  /** Gives back the units of expired leases (of one account, or all): their gateways died. */
  private async sweep(accountId?: string): Promise<number> {
    meteringStatements.inc({ statement: 'sweep' });
    const units = await releaseExpiredLeases(this.pool!, accountId);
    if (units > 0) {
      expiredLeaseUnitsReleased.inc(units);
      this.logger.warn(`released ${units} unit(s) of expired leases (a gateway stopped without returning them)`);
    }
    return units;
  }
}

/** A unit taken from a lease: the ticket remembers its lease for the settlement. */
class LeaseTicket implements MeterTicket {
  readonly reservation: MeterTicket['reservation'];
  readonly limit: number;
  readonly remaining: number;
  readonly periodEnd: Date;
  settled = false;

  constructor(
    accountId: string,
    readonly take: LeaseTake,
  ) {
    this.reservation = { accountId, period: take.period, units: 1, kind: 'request' };
    this.limit = take.limit;
    this.remaining = take.remaining;
    this.periodEnd = take.periodEnd;
  }
}

/**
 * A counted request that passed authentication and validation counts once (docs/api/accounts.md) —
 * including a 404 for an unknown id. 400, 401, 403 and 429 do not, and neither do 5xx/503: the
 * caller got no data through no fault of theirs.
 */
export function countsAsUsage(status: number): boolean {
  return status < 400 || status === 404;
}

/** The headers of a counted route's response with this final status. */
export function ticketHeaders(ticket: MeterTicket, status: number): Record<string, string> {
  const remaining = countsAsUsage(status) ? ticket.remaining : ticket.remaining + ticket.reservation.units;
  return rateLimitHeaders(ticket.limit, remaining, ticket.periodEnd);
}

/** X-RateLimit-* of the monthly allowance; the reset is the next period's start in Unix seconds. */
export function rateLimitHeaders(limit: number, remaining: number, periodEnd: Date): Record<string, string> {
  return {
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(Math.max(0, remaining)),
    'x-ratelimit-reset': String(Math.floor(periodEnd.getTime() / 1000)),
  };
}
