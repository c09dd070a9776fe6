import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DECORATORS } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import type { ApiPrincipal } from '../http/request-context';
import { routeMetadata } from '../http/route-metadata';

export const PUBLIC_ROUTE = 'cars:public';

/** The route needs no API key (and is never metered or burst-limited). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(PUBLIC_ROUTE, true);

/**
 * In the OpenAPI document, the operation needs no credentials: `security: []`, said explicitly
 * rather than left out (an operation without `security` reads as "not documented"). On a class,
 * every route of the controller; on a method, that route — whatever the order of its decorators.
 */
export const ApiNoCredentials =
  (): MethodDecorator & ClassDecorator =>
  (target: object, _key?: string | symbol, descriptor?: PropertyDescriptor): void => {
    if (descriptor) {
      const operation: object | undefined = Reflect.getMetadata(DECORATORS.API_OPERATION, descriptor.value);
      Reflect.defineMetadata(DECORATORS.API_OPERATION, { ...operation, security: [] }, descriptor.value);
    } else {
      Reflect.defineMetadata(DECORATORS.API_SECURITY, [], target);
    }
  };

export function isPublicRoute(reflector: Reflector, context: ExecutionContext): boolean {
  return routeMetadata<boolean>(reflector, context, PUBLIC_ROUTE) === true;
}

/** The authenticated caller of the request (undefined on public routes, or with METERING_ENABLED=false). */
export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ApiPrincipal | undefined =>
    context.switchToHttp().getRequest<FastifyRequest>().principal,
);
