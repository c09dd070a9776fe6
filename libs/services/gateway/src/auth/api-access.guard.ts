import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { KeyHolderRecord } from '@cars/accounts';
import { ServiceUnavailableError } from '@cars/messaging';
import type { FastifyRequest } from 'fastify';
import { API_ACCESS_CONFIG, ApiAccessConfig } from '../metering/api-access.config';
import { RequestAdmission } from '../metering/request-admission';
import { ambiguousApiKey, authorizationHeaderCount, invalidApiKey, missingApiKey } from './access.errors';
import { isPublicRoute } from './auth.decorators';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import '../http/request-context';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * Every route but the public ones, in this order of answers:
 *   401 no or bad API key → 429 burst limit (Retry-After) → 403 plan → 429 monthly allowance.
 * Everything after authentication is `RequestAdmission` (shared with the account area's console
 * sessions): the burst bucket of the key, the plan, and on a `@Metered()` route the monthly unit.
 * Only a bearer API key is read here: a console session cookie never authorizes these routes.
 */
@Injectable()
export class ApiAccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly admission: RequestAdmission,
    @Inject(API_ACCESS_CONFIG) private readonly config: ApiAccessConfig,
  ) {}

  /** At once (no promise) when the key's principal is cached and admission needs no round trip. */
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    if (!this.config.enabled || context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (isPublicRoute(this.reflector, context)) return true;

    const header = request.headers.authorization;
    if (!header) throw missingApiKey();
    if (authorizationHeaderCount(request.raw.rawHeaders) > 1) throw ambiguousApiKey();
    const token = BEARER.exec(header)?.[1];
    if (!token) throw invalidApiKey();
    const principal = this.authenticator.authenticate(token);
    if (!(principal instanceof Promise)) return this.admitted(context, principal);
    return principal.then(
      (holder) => this.admitted(context, holder),
      (error: unknown) => {
        throw new ServiceUnavailableError('authentication', error);
      },
    );
  }

  private admitted(context: ExecutionContext, principal: KeyHolderRecord | null): true | Promise<true> {
    if (!principal) throw invalidApiKey();
    const admitted = this.admission.admit(context, principal, { id: principal.keyId, per: 'API key' });
    return admitted instanceof Promise ? admitted.then(() => true) : true;
  }
}
