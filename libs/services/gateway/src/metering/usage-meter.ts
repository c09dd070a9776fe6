import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import {
  commitUsage,
  createLedgerPool,
  effectivePlan,
  LedgerPool,
  releaseUsage,
  Reservation,
  reserveUsage,
} from '@cars/accounts';
import { ServiceUnavailableError } from '@cars/messaging';
import { connectionUrlOf } from '@cars/persistence';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DataSource } from 'typeorm';
import { allowanceRejections } from '../metrics/gateway.metrics';
import type { ApiPrincipal, MeterTicket } from '../http/request-context';
import { monthlyLimitExceeded } from './admission.errors';
import { API_ACCESS_CONFIG, ApiAccessConfig } from './api-access.config';
import { errorMessage } from '@cars/contracts';

export type { MeterTicket } from '../http/request-context';

/**
 * A counted request reserves one unit before its handler runs and, once the outcome is known,
 * commits it (the request counts) or releases it (it must not). See @cars/accounts usage-ledger.
 * The statements go through a ledger pool of their own with asynchronous commit (see
 * `createLedgerPool` for what that trades), to the database of the process's DataSource.
 */
@Injectable()
export class UsageMeter implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Metering');
  private pool?: LedgerPool;
  /** Settlements still running: shutdown waits for them before closing the pool. */
  private readonly settling = new Set<Promise<void>>();

  constructor(
    private readonly dataSource: DataSource,
    @Inject(API_ACCESS_CONFIG) private readonly config: ApiAccessConfig,
  ) {}

  onModuleInit(): void {
    if (!this.config.enabled) return;
    this.pool = createLedgerPool(connectionUrlOf(this.dataSource), {
      max: this.config.meteringPoolSize,
      applicationName: 'gateway-ledger',
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(this.settling);
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end();
  }

  private get ledger(): LedgerPool {
    if (!this.pool) throw new Error('UsageMeter used while metering is off or after shutdown');
    return this.pool;
  }

  /** Reserves one unit, or throws the 429 of an exhausted allowance (503 if the ledger is unreachable). */
  async reserve(principal: ApiPrincipal, now = new Date()): Promise<MeterTicket> {
    const plan = effectivePlan(principal, now);
    let result;
    try {
      result = await reserveUsage(this.ledger, { accountId: principal.accountId, limit: plan.monthlyLimit, now, kind: 'request' });
    } catch (error) {
      this.logger.error(`usage ledger unavailable: ${errorMessage(error)}`);
      throw new ServiceUnavailableError('usage accounting', error);
    }
    if (!result.ok) {
      allowanceRejections.inc({ cause: 'monthly' });
      throw monthlyLimitExceeded(plan, rateLimitHeaders(result.limit, 0, result.periodEnd));
    }
    return {
      reservation: result.reservation,
      limit: result.limit,
      remaining: result.remaining,
      periodEnd: result.periodEnd,
      settled: false,
    };
  }

  /**
   * Commits (`counted`) or releases the unit, once, without holding up the response: the unit is
   * already held by the reservation, so the limit is exact whether the commit lands before or
   * just after the response leaves (`settled()` waits for it). A failure is logged, not thrown:
   * the unit then stays reserved — capacity the account loses until the period ends, never
   * units it gains.
   */
  settle(ticket: MeterTicket, counted: boolean): void {
    if (ticket.settled) return;
    ticket.settled = true;
    const work = this.apply(ticket.reservation, counted);
    this.settling.add(work);
    void work.finally(() => this.settling.delete(work));
  }

  /**
   * Ties a reservation to its response: the X-RateLimit headers are set as it is sent
   * (`MeteringHooks`), and the unit is settled when it closes — committed if the final status
   * counts and the response was delivered, released otherwise (client gone, 400, 5xx…).
   * Deciding on the status actually sent covers every path to the response: handler, pipes,
   * later guards, the error filter.
   */
  track(request: FastifyRequest, reply: FastifyReply, ticket: MeterTicket): void {
    request.meterTicket = ticket;
    // The client may have gone while the reservation was being made: 'close' would not come again.
    if (reply.raw.destroyed || request.raw.socket?.destroyed) return this.settle(ticket, false);
    reply.raw.once('close', () => this.settle(ticket, reply.raw.writableFinished && countsAsUsage(reply.statusCode)));
  }

  /** Resolves once every settlement started so far has reached the ledger. */
  async settled(): Promise<void> {
    await Promise.all(this.settling);
  }

  private async apply(reservation: Reservation, counted: boolean): Promise<void> {
    const action = counted ? 'commit' : 'release';
    try {
      const done = counted ? await commitUsage(this.ledger, reservation) : await releaseUsage(this.ledger, reservation);
      if (!done) this.logger.error(`no reservation to ${action} for account ${reservation.accountId}`);
    } catch (error) {
      this.logger.error(`could not ${action} a unit for account ${reservation.accountId}: ${String(error)}`);
    }
  }
}

/** The ledger pool connects to the database of the process's DataSource. */
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
