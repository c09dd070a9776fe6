import { ExecutionContext, Inject, Injectable, OnModuleDestroy, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { gauge } from '@cars/metrics';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { tooManyBroadSearches } from './admission.errors';
import { API_ACCESS_CONFIG, ApiAccessConfig } from './api-access.config';
import { routeMetadata } from '../http/route-metadata';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's place among its account's requests in flight (`@InFlightCapped()` routes). */
    inFlightSlot?: InFlightSlot;
  }
}

export const IN_FLIGHT_CAPPED = 'cars:in-flight-capped';

/**
 * The route reaches the query or stats service with work whose cost depends on its parameters
 * (`/auctions`, `/auctions/live`, bids, `/stats`, `/account/stats`, `/mcp`): an account's requests
 * to these routes count against GATEWAY_MAX_IN_FLIGHT_PER_ACCOUNT (`RequestAdmission`).
 */
export const InFlightCapped = (): MethodDecorator & ClassDecorator => SetMetadata(IN_FLIGHT_CAPPED, true);

export function isInFlightCapped(reflector: Reflector, context: ExecutionContext): boolean {
  return routeMetadata<boolean>(reflector, context, IN_FLIGHT_CAPPED) === true;
}

/** The limiters of this process (one per gateway app), read when the gauge is scraped. */
const limiters = new Set<InFlightLimiter>();

gauge({
  name: 'gateway_account_requests_in_flight',
  help: 'Requests of accounts in flight on in-flight-capped routes (the per-account cap counts these), all accounts together.',
  collect() {
    let total = 0;
    for (const limiter of limiters) total += limiter.total;
    this.set(total);
  },
});

/**
 * One admitted request's place. It is given back once the response has closed (answered, failed
 * or abandoned by the client) **and** the handler's work has ended: a client that hangs up does
 * not free the place while the service is still working for it (or abort-and-resend would run
 * any number of statements at once). Work that never starts (a later guard refused) frees it with
 * the response.
 */
export class InFlightSlot {
  private closed = false;
  /** From admission until Nest's handler for the request has settled (`endWorkWithHandlers`). */
  private working = true;
  private freed = false;

  constructor(
    private readonly free: () => void,
    private readonly broad: BroadSearchLane,
  ) {}

  /**
   * Runs a keyword search of several words in the account's lane for them: at most
   * BROAD_SEARCHES_PER_ACCOUNT in flight (429 beyond, not counted). The query service runs such
   * statements one at a time for everyone, so without a lane per account one account could queue
   * a line of them ahead of every other account's.
   */
  async broadSearch<T>(work: () => Promise<T>): Promise<T> {
    const leave = this.broad.enter();
    if (!leave) throw tooManyBroadSearches(BROAD_SEARCHES_PER_ACCOUNT);
    try {
      return await work();
    } finally {
      leave();
    }
  }

  responseClosed(): void {
    this.closed = true;
    if (!this.working) this.release();
  }

  workEnded(): void {
    this.working = false;
    if (this.closed) this.release();
  }

  /** Gives the place back now (idempotent). */
  release(): void {
    if (this.freed) return;
    this.freed = true;
    this.free();
  }
}

/** Keyword searches of several words an account may have in flight (per gateway process). */
export const BROAD_SEARCHES_PER_ACCOUNT = 1;

/** One account's several-word keyword searches in flight: enter (or null at the limit), then leave. */
interface BroadSearchLane {
  enter(): (() => void) | null;
}

/**
 * Requests in flight per account, in this gateway process (not shared between replicas: N
 * replicas allow N × the cap; the burst limit, shared in Redis, still bounds the rate).
 */
@Injectable()
export class InFlightLimiter implements OnModuleDestroy {
  private readonly counts = new Map<string, number>();
  private readonly broadSearches = new Map<string, number>();
  /** Requests in flight, all accounts together (the gauge, read when scraped). */
  total = 0;

  constructor(@Inject(API_ACCESS_CONFIG) private readonly config: ApiAccessConfig) {
    limiters.add(this);
  }

  onModuleDestroy(): void {
    limiters.delete(this);
  }

  get limit(): number {
    return this.config.maxInFlightPerAccount;
  }

  /** A place for one more request of the account, or null when it has `limit` in flight. */
  acquire(accountId: string): InFlightSlot | null {
    const count = this.counts.get(accountId) ?? 0;
    if (count >= this.limit) return null;
    this.counts.set(accountId, count + 1);
    this.total += 1;
    return new InFlightSlot(
      () => {
        decrement(this.counts, accountId);
        this.total -= 1;
      },
      {
        enter: () => {
          const broad = this.broadSearches.get(accountId) ?? 0;
          if (broad >= BROAD_SEARCHES_PER_ACCOUNT) return null;
          this.broadSearches.set(accountId, broad + 1);
          return () => decrement(this.broadSearches, accountId);
        },
      },
    );
  }

  /** The account's requests in flight now. */
  inFlight(accountId: string): number {
    return this.counts.get(accountId) ?? 0;
  }
}

function decrement(counts: Map<string, number>, accountId: string): void {
  const left = (counts.get(accountId) ?? 1) - 1;
  if (left > 0) counts.set(accountId, left);
  else counts.delete(accountId);
}

/**
 * Ends the handler's work of every request holding a place when Nest's route handler settles —
 * answered, failed through the error filter, or done after the client hung up — by wrapping each
 * Fastify route's handler as it is added (call before the application registers its routes).
 * Not a Nest interceptor: every intercepted request pays Nest's `AsyncResource.bind` twice, about
 * 20 µs each on Node 20 (measured: ~8 % of the gateway's CPU per request).
 */
export function endWorkWithHandlers(fastify: FastifyInstance): void {
  fastify.addHook('onRoute', (route) => {
    const handler = route.handler;
    route.handler = function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      const result: unknown = handler.call(this, request, reply);
      if (result instanceof Promise) {
        const ended = () => request.inFlightSlot?.workEnded();
        result.then(ended, ended);
      } else request.inFlightSlot?.workEnded();
      return result;
    } as typeof handler;
  });
}
