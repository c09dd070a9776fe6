import { ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { effectivePlan } from '@cars/accounts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiPrincipal } from '../http/request-context';
import { allowanceRejections } from '../metrics/gateway.metrics';
import { accountRequirementError, burstLimitExceeded, tooManyInFlight } from './admission.errors';
import { API_ACCESS_CONFIG, ApiAccessConfig } from './api-access.config';
import { InFlightLimiter, isInFlightCapped } from './in-flight';
import { isMetered } from './metered.decorator';
import { paidPlanRequirement } from './paid-plan.decorator';
import { BurstLimiter } from './burst-limiter';
import type { BurstDecision } from './token-bucket';
import { countsAsUsage, MeterTicket, UsageMeter } from './usage-meter';
import '../http/request-context';

type Reserved = { ok: true; ticket: MeterTicket } | { ok: false; error: unknown };

/** Whose burst bucket a request draws on: an API key's, or (console sessions) an account's. */
export interface BurstBucket {
  id: string;
  /** For the 429 message: "per API key", "per account". */
  per: 'API key' | 'account';
}

/**
 * What follows authentication on every authenticated route — an API key's (ApiAccessGuard) or a
 * console session's (the account area's SessionGuard) — so both take the same path:
 *   429 requests in flight (`@InFlightCapped()` routes, Retry-After) → 429 burst limit (Retry-After)
 *   → 403 plan (`@RequiresPaidPlan`) → 429 monthly allowance.
 * The in-flight cap is checked first, in process memory: its 429 takes no burst token and
 * reserves no unit.
 * On a `@Metered()` route the monthly unit is reserved concurrently with the burst check (one round
 * trip of waiting instead of two) and given back if the burst limit refuses; the response settles
 * it (`whenClosed`). Validation runs after guards, so a 400 holds a unit for the moment it
 * takes and then releases it.
 */
@Injectable()
export class RequestAdmission {
  constructor(
    private readonly reflector: Reflector,
    private readonly burst: BurstLimiter,
    private readonly meter: UsageMeter,
    private readonly inFlight: InFlightLimiter,
    @Inject(API_ACCESS_CONFIG) private readonly config: ApiAccessConfig,
  ) {}

  /** At once (no promise) when the key's burst tokens and the account's units are held here. */
  admit(context: ExecutionContext, principal: ApiPrincipal, bucket: BurstBucket): void | Promise<void> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const reply = http.getResponse<FastifyReply>();
    request.principal = principal;
    const slot = this.takePlace(context, principal, request);
    let admitted: void | Promise<void>;
    try {
      admitted = this.admitInPlace(context, principal, bucket, request);
    } catch (error) {
      slot?.release();
      throw error;
    }
    if (!(admitted instanceof Promise)) return this.whenClosed(request, reply);
    return admitted.then(
      () => this.whenClosed(request, reply),
      (error: unknown) => {
        slot?.release();
        throw error;
      },
    );
  }

  /**
   * A place among the account's requests in flight on a capped route (429 at the cap), given back
   * when the response closes and the handler's work has ended (`endWorkWithHandlers`).
   */
  private takePlace(context: ExecutionContext, principal: ApiPrincipal, request: FastifyRequest) {
    if (this.inFlight.limit === 0 || !isInFlightCapped(this.reflector, context)) return undefined;
    const slot = this.inFlight.acquire(principal.accountId);
    if (!slot) {
      allowanceRejections.inc({ cause: 'in_flight' });
      throw tooManyInFlight(this.inFlight.limit);
    }
    request.inFlightSlot = slot;
    return slot;
  }

  /**
   * Once admitted, what the request holds — its place in flight, its unit — is given back by one
   * listener when the response closes; at once if the client is gone already ('close' would not
   * come again).
   */
  private whenClosed(request: FastifyRequest, reply: FastifyReply): void {
    const slot = request.inFlightSlot;
    const ticket = request.meterTicket;
    if (!slot && !ticket) return;
    const closed = () => {
      slot?.responseClosed();
      if (ticket) this.meter.settle(ticket, reply.raw.writableFinished && countsAsUsage(reply.statusCode));
    };
    if (reply.raw.destroyed || request.raw.socket?.destroyed) closed();
    else reply.raw.once('close', closed);
  }

  private admitInPlace(context: ExecutionContext, principal: ApiPrincipal, bucket: BurstBucket, request: FastifyRequest): void | Promise<void> {
    const now = this.config.now();
    const plan = effectivePlan(principal, now);
    // Both are answered at once (no promise) when this gateway holds the key's burst tokens and
    // the account's units — nearly every request of a busy key.
    const burst = this.burst.take(bucket.id);
    const requirement = paidPlanRequirement(this.reflector, context);
    const planError = requirement ? accountRequirementError(principal, requirement, now) : null;
    const reserved = planError || !isMetered(this.reflector, context) ? null : settledOrCaught(this.meter.reserve(principal, now));
    const decide = (allowed: BurstDecision, result: Reserved | null): void => {
      if (!allowed.allowed) {
        if (result?.ok) this.meter.settle(result.ticket, false);
        allowanceRejections.inc({ cause: 'burst' });
        throw burstLimitExceeded(plan, this.config.burstRatePerSecond, this.config.burstCapacity, allowed.retryAfterMs, bucket.per);
      }
      if (planError) throw planError;
      if (result && !result.ok) throw result.error;
      if (result) request.meterTicket = result.ticket;
    };
    if (!(burst instanceof Promise) && !(reserved instanceof Promise)) return decide(burst, reserved);
    // The burst answer decides first: a refused request gives its unit back as soon as it has one.
    return Promise.resolve(burst).then(async (allowed) => {
      if (!allowed.allowed && reserved instanceof Promise) {
        void reserved.then((r) => r.ok && this.meter.settle(r.ticket, false));
        return decide(allowed, null);
      }
      return decide(allowed, await reserved);
    });
  }
}

/**
 * A reservation as a result to read after the burst check: at once when the unit was taken at
 * once, else a promise that does not reject (the burst 429 comes first, and a refused or failed
 * reservation must not be an unhandled rejection meanwhile).
 */
function settledOrCaught(ticket: MeterTicket | Promise<MeterTicket>): Reserved | Promise<Reserved> {
  if (!(ticket instanceof Promise)) return { ok: true, ticket };
  return ticket.then(
    (t) => ({ ok: true as const, ticket: t }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}
