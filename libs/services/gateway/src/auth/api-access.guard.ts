import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { effectivePlan } from '@cars/accounts';
import { ServiceUnavailableError } from '@cars/messaging';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiException } from '../http/api-exception';
import { allowanceRejections } from '../metrics/gateway.metrics';
import { API_ACCESS_CONFIG, ApiAccessConfig } from '../metering/api-access.config';
import { BurstLimiter } from '../metering/burst-limiter';
import { isMetered } from '../metering/metered.decorator';
import { MeterTicket, UsageMeter } from '../metering/usage-meter';
import {
  ambiguousApiKey,
  authorizationHeaderCount,
  burstLimitExceeded,
  invalidApiKey,
  missingApiKey,
  accountRequirementError,
} from './access.errors';
import { isPublicRoute, PaidPlanRequirement, paidPlanRequirement } from './auth.decorators';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import { ApiPrincipal } from './principal';
import '../http/request-context';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

type Reserved = { ok: true; ticket: MeterTicket } | { ok: false; error: unknown };

/**
 * Every route but the public ones, in this order of answers:
 *   401 no or bad API key → 429 burst limit (Retry-After) → 403 plan → 429 monthly allowance.
 * On a `@Metered()` route the monthly unit is reserved here, concurrently with the burst check
 * (one round trip of waiting instead of two), and given back if the burst limit refuses; the
 * response settles it (`UsageMeter.track`). Validation runs after guards, so a 400 holds a
 * unit for the moment it takes and then releases it.
 */
@Injectable()
export class ApiAccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly burst: BurstLimiter,
    private readonly meter: UsageMeter,
    @Inject(API_ACCESS_CONFIG) private readonly config: ApiAccessConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.config.enabled || context.getType() !== 'http') return true;
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    if (isPublicRoute(this.reflector, context)) return true;

    const header = request.headers.authorization;
    if (!header) throw missingApiKey();
    if (authorizationHeaderCount(request.raw.rawHeaders) > 1) throw ambiguousApiKey();
    const token = BEARER.exec(header)?.[1];
    if (!token) throw invalidApiKey();
    const principal = await this.authenticator.authenticate(token).catch((error: unknown) => {
      throw new ServiceUnavailableError('authentication', error);
    });
    if (!principal) throw invalidApiKey();
    request.principal = principal;

    const now = this.config.now();
    const plan = effectivePlan(principal, now);
    const burst = this.burst.take(principal.keyId);
    const planError = this.planError(principal, paidPlanRequirement(this.reflector, context), now);
    const reserved: Promise<Reserved> | null =
      planError || !isMetered(this.reflector, context)
        ? null
        : this.meter.reserve(principal, now).then(
            (ticket) => ({ ok: true as const, ticket }),
            (error: unknown) => ({ ok: false as const, error }),
          );

    const allowed = await burst;
    if (!allowed.allowed) {
      void reserved?.then((r) => r.ok && this.meter.settle(r.ticket, false));
      allowanceRejections.inc({ cause: 'burst' });
      throw burstLimitExceeded(plan, this.config.burstRatePerSecond, this.config.burstCapacity, allowed.retryAfterMs);
    }
    if (planError) throw planError;
    if (reserved) {
      const result = await reserved;
      if (!result.ok) throw result.error;
      this.meter.track(request, http.getResponse<FastifyReply>(), result.ticket);
    }
    return true;
  }

  private planError(principal: ApiPrincipal, requirement: PaidPlanRequirement | undefined, now: Date): ApiException | null {
    return requirement ? accountRequirementError(principal, requirement, now) : null;
  }
}
