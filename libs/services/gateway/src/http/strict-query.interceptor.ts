import { CallHandler, ExecutionContext, INestApplication, Injectable, NestInterceptor, UseInterceptors } from '@nestjs/common';
import { MetadataScanner, ModulesContainer } from '@nestjs/core';
import { unrecognised, validationError } from '@cars/contracts';
import type { FastifyRequest } from 'fastify';
import { Observable } from 'rxjs';
import { ApiException } from './api-exception';
import { readsQuery, routeMethod } from './nest-internals';

let strictQuery: StrictQueryInterceptor | undefined;
/** The handlers given the interceptor so far (once each, however many applications the process makes). */
const strictHandlers = new WeakSet<object>();

/**
 * Puts the interceptor on the routes that take no query (call before the application is
 * initialized, when its routes are registered): the others have the validation pipe, and a route
 * without any interceptor skips Nest's observable pipeline (measured: rxjs was ~5 % of the
 * gateway's CPU per request as a global interceptor). Covers every controller of every module.
 */
export function applyStrictQuery(app: INestApplication): void {
  // One instance for every application of the process (handlers' metadata is per class, shared).
  const interceptor = (strictQuery ??= new StrictQueryInterceptor());
  const useInterceptor = UseInterceptors(interceptor);
  const scanner = new MetadataScanner();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new () => object) | null;
      if (!controller) continue;
      const prototype = controller.prototype as Record<string, unknown>;
      // The methods Nest's router maps: every method of the class and its bases, an override once.
      for (const name of scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name] as object;
        if (strictHandlers.has(handler) || routeMethod(handler) === undefined || readsQuery(controller, name)) continue;
        strictHandlers.add(handler);
        // What `@UseInterceptors(interceptor)` on the method would have recorded.
        useInterceptor(prototype, name, { value: handler });
      }
    }
  }
}

/**
 * An unknown query parameter is a 400 naming it, on every route (docs/api/query.md, typo
 * protection). A route that reads its query through a DTO (`@Query() dto`) is held to it by the
 * validation pipe; this interceptor covers the routes that take no parameters at all, so
 * `/makes?colour=red` is refused too. It runs after the guards, like the validation pipe, so a
 * missing key is still a 401 first.
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
          validationError(Object.fromEntries(names.map((name) => [name, [unrecognised(name, 'parameter')]]))),
        );
      }
    }
    return next.handle();
  }

  private handlerReadsQuery(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    let known = this.readsQuery.get(handler);
    if (known === undefined) {
      known = readsQuery(context.getClass(), handler.name);
      this.readsQuery.set(handler, known);
    }
    return known;
  }
}
