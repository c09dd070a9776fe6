import { applyDecorators, CanActivate, ExecutionContext, Inject, Injectable, SetMetadata, UseGuards } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiCookieAuth, ApiForbiddenResponse, ApiTooManyRequestsResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { ErrorNames } from '@cars/contracts';
import { ServiceUnavailableError } from '@cars/messaging';
import type { FastifyRequest } from 'fastify';
import { ErrorResponseDto } from '../auctions/api-responses';
import { ApiNoCredentials, Public } from '../auth/auth.decorators';
import type { ApiPrincipal } from '../http/request-context';
import { ApiException } from '../http/api-exception';
import { API_ACCESS_CONFIG, ApiAccessConfig } from '../metering/api-access.config';
import { RequestAdmission } from '../metering/request-admission';
import { ACCOUNT_AREA_CONFIG, AccountAreaConfig } from './account-area.config';
import { AccountSession, AccountSessions } from './account-sessions.service';
import { SESSION_COOKIE } from './session-cookie';
import { assertCsrfToken, assertSameSite, isStateChanging } from './request-origin';

const SESSION_MODE = 'cars:account-session';
type SessionMode = 'required' | 'none';

export const NO_SESSION_MESSAGE = `Sign in first: this route needs a console session (the ${SESSION_COOKIE} cookie of POST /account/signin)`;

export function noSession(): ApiException {
  return new ApiException(401, { error: ErrorNames.Unauthorized, message: NO_SESSION_MESSAGE });
}

/**
 * The account area's routes. The data API's guard lets them through (`@Public()`: no API key is
 * read, and none is needed); this guard then answers, in order:
 *   403 cross-site Origin (state-changing requests) → 401 no live session → 403 missing or wrong
 *   X-CSRF-Token (state-changing) → then `RequestAdmission`, as for an API key: 429 burst limit
 *   (one bucket per account) → 403 plan (`@RequiresPaidPlan`) → 429 monthly allowance
 *   (`@Metered()`).
 * `session: 'none'` routes (sign-up, sign-in, verification) get only the Origin check.
 * The session becomes the request's principal (`keyId` null) for these routes only: the data
 * API's routes never read the cookie.
 */
@Injectable()
export class AccountSessionGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly sessions: AccountSessions,
    private readonly admission: RequestAdmission,
    @Inject(API_ACCESS_CONFIG) private readonly access: ApiAccessConfig,
    @Inject(ACCOUNT_AREA_CONFIG) private readonly config: AccountAreaConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const changing = isStateChanging(request);
    if (changing) assertSameSite(request, this.config.publicBaseUrl);
    const mode = this.reflector.getAllAndOverride<SessionMode | undefined>(SESSION_MODE, [context.getHandler(), context.getClass()]);
    if (mode === 'none') {
      if (changing) refuseNonJsonBody(request);
      return true;
    }

    const session = await this.sessions.find(request).catch((error: unknown) => {
      throw new ServiceUnavailableError('sessions', error);
    });
    if (!session) {
      // With API access off (benchmarks) nothing is refused here; the handlers still need a session.
      if (!this.access.enabled) return true;
      throw noSession();
    }
    if (changing) assertCsrfToken(request, session.csrfToken);
    request.accountSession = session;
    const principal: ApiPrincipal = { keyId: null, accountId: session.accountId, ...session.account };
    if (this.access.enabled) await this.admission.admit(context, principal, { id: `account:${session.accountId}`, per: 'account' });
    else request.principal = principal;
    return true;
  }
}

/**
 * Sign-up, sign-in and verification take JSON only: a body that is not `application/json` — what
 * an HTML form posts (urlencoded, multipart, text/plain), the one cross-site POST a browser sends
 * without asking — or a body without a content type is 415 before anything reads it. A request
 * with no body at all reaches validation (400 naming the missing members).
 */
function refuseNonJsonBody(request: FastifyRequest): void {
  const type = request.headers['content-type'];
  const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
  const json = type !== undefined && String(type).split(';')[0].trim().toLowerCase() === 'application/json';
  if (type === undefined ? hasBody : !json) {
    throw new ApiException(415, { error: 'Unsupported Media Type', message: 'Request bodies are JSON: send content-type: application/json' });
  }
}

/** The console session of the request (set by AccountSessionGuard), or 401. */
export function sessionOf(request: FastifyRequest): AccountSession {
  if (!request.accountSession) throw noSession();
  return request.accountSession;
}

/**
 * An account-area route: no API key; a console session unless `session: 'none'`; CSRF and Origin
 * checks on changes. Documents the cookie and the 401/403 of sessions.
 */
export const AccountRoute = (options: { session?: SessionMode } = {}) => {
  const mode = options.session ?? 'required';
  return applyDecorators(
    Public(),
    SetMetadata(SESSION_MODE, mode),
    UseGuards(AccountSessionGuard),
    ...(mode === 'required'
      ? [
          ApiCookieAuth(SESSION_COOKIE),
          ApiUnauthorizedResponse({ type: ErrorResponseDto, description: '`Unauthorized`: no live console session (sign in).' }),
        ]
      : [ApiNoCredentials()]),
  );
};

/** 403 of a state-changing account-area route (documented per route, since a route's own 403 would replace it). */
export const CSRF_403 =
  '`Forbidden`: a cross-site `Origin` (or `Sec-Fetch-Site: cross-site`), or — with a session — a missing or wrong `X-CSRF-Token` header';

export const ApiChangeForbidden = (also?: string) =>
  ApiForbiddenResponse({ type: ErrorResponseDto, description: also ? `${CSRF_403}; or ${also}` : `${CSRF_403}.` });

/** 429 of the per-account burst limit: every session route takes a token (BURST_RATE_PER_SECOND / BURST_CAPACITY, as a key). */
export const ApiBurstLimited = () =>
  ApiTooManyRequestsResponse({
    type: ErrorResponseDto,
    description: '`Rate Limit Exceeded`: the burst limit of the account (`Retry-After`).',
    headers: { 'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer' } } },
  });
