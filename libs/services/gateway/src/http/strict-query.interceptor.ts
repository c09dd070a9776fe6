import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { validationError } from '@cars/contracts';
import type { FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';
import { ApiException } from './api-exception';

/**
 * DESIGN.md §5: an unknown query parameter is a 400 naming it, on every route. A route that reads
 * its query through a DTO (`@Query() dto`) is held to it by the validation pipe; this interceptor
 * covers the routes that take no parameters at all, so `/makes?colour=red` is refused too. It runs
 * after the guards, like the validation pipe, so a missing key is still a 401 first.
 */
@Injectable()
export class StrictQueryInterceptor implements NestInterceptor {
  private readonly readsQuery = new WeakMap<object, boolean>();

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() === 'http') {
      const request = context.switchToHttp().getRequest<FastifyRequest>();
      const query = request.query as Record<string, unknown> | undefined;
      const names = query ? Object.keys(query) : [];
      if (names.length > 0 && !this.handlerReadsQuery(context)) {
        throw new ApiException(
          400,
          validationError(Object.fromEntries(names.map((name) => [name, [`${name} is not a recognised parameter`]]))),
        );
      }
    }
    return next.handle();
  }

  private handlerReadsQuery(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    let known = this.readsQuery.get(handler);
    if (known === undefined) {
      const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, context.getClass(), handler.name) ?? {}) as Record<
        string,
        unknown
      >;
      known = Object.keys(args).some((key) => Number(key.split(':')[0]) === RouteParamtypes.QUERY);
      this.readsQuery.set(handler, known);
    }
    return known;
  }
}
