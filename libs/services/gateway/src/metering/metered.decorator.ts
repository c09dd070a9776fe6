import { ExecutionContext, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { routeMetadata } from '../http/route-metadata';

export const METERED = 'cars:metered';

/**
 * The route draws on the monthly allowance (docs/api/accounts.md, "What counts": `/auctions`,
 * `/auctions/live`, bids, `/stats`). A request counts once when it passes authentication and
 * validation and is answered 2xx/3xx or 404; 400, 401, 403, 429 and 5xx do not count.
 * Responses carry X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset.
 */
export const Metered = (): MethodDecorator & ClassDecorator => SetMetadata(METERED, true);

export function isMetered(reflector: Reflector, context: ExecutionContext): boolean {
  return routeMetadata<boolean>(reflector, context, METERED) === true;
}
