import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import type { ApiPrincipal } from '../http/request-context';

export const PUBLIC_ROUTE = 'cars:public';

/** The route needs no API key (and is never metered or burst-limited). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(PUBLIC_ROUTE, true);

export function isPublicRoute(reflector: Reflector, context: ExecutionContext): boolean {
  return reflector.getAllAndOverride<boolean | undefined>(PUBLIC_ROUTE, [context.getHandler(), context.getClass()]) === true;
}

/** The authenticated caller of the request (undefined on public routes, or with METERING_ENABLED=false). */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ApiPrincipal | undefined =>
    context.switchToHttp().getRequest<FastifyRequest>().principal,
);
