import { CanActivate, ExecutionContext, INestApplication, Injectable, UseGuards } from '@nestjs/common';
import { MetadataScanner, ModulesContainer } from '@nestjs/core';
import { unrecognised, validationError } from '@cars/contracts';
import type { FastifyRequest } from 'fastify';
import { ApiException } from './api-exception';
import { readsQuery, routeMethod } from './nest-internals';

let strictQuery: StrictQueryGuard | undefined;
/** The handlers given the guard so far (once each, however many applications the process makes). */
const strictHandlers = new WeakSet<object>();

/**
 * Puts the guard on the routes that take no query (call before the application is initialized,
 * when its routes are registered): the others have the validation pipe. A guard, not an
 * interceptor: Nest runs an interceptor through rxjs and `AsyncResource.bind` twice per request
 * (~20 µs each on Node 20). Covers every controller of every module.
 */
export function applyStrictQuery(app: INestApplication): void {
  // One instance for every application of the process (handlers' metadata is per class, shared).
  const guard = (strictQuery ??= new StrictQueryGuard());
  const useGuard = UseGuards(guard);
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
        // What `@UseGuards(guard)` on the method would have recorded.
        useGuard(prototype, name, { value: handler });
      }
    }
  }
}

/**
 * An unknown query parameter is a 400 naming it, on every route (docs/api/query.md, typo
 * protection). A route that reads its query through a DTO (`@Query() dto`) is held to it by the
 * validation pipe; this guard covers the routes that take no parameters at all, so
 * `/makes?colour=red` is refused too. A method's guard runs after the global ones, so a missing
 * key is still a 401 first.
 */
@Injectable()
export class StrictQueryGuard implements CanActivate {
  private readonly readsQuery = new WeakMap<object, boolean>();

  canActivate(context: ExecutionContext): true {
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
    return true;
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
