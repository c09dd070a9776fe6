import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';

/**
 * The one place the gateway reads Nest's routing metadata: what `@Controller`, `@Get`… and
 * `@Query` record, which Nest's router reads but Nest offers no public reader for (keys from
 * `@nestjs/common/constants`, the `type:index` keys of route arguments). nest-internals.spec.ts
 * checks each reading against the installed @nestjs/common's decorators, so an upgrade that moves
 * them fails there rather than silently dropping the strict query check or the tools' route names.
 */

/** The HTTP method of a route handler, or undefined when the function is not one. */
export function routeMethod(handler: object): RequestMethod | undefined {
  return Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
}

/** The path of `@Controller(path)` (given the class) or of `@Get(path)`… (given the handler). */
export function routePath(target: object): string | string[] | undefined {
  return Reflect.getMetadata(PATH_METADATA, target) as string | string[] | undefined;
}

/** Whether the route handler `method` of `controller` takes any `@Query()` argument. */
export function readsQuery(controller: object, method: string): boolean {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) ?? {}) as Record<string, unknown>;
  return Object.keys(args).some((key) => Number(key.split(':')[0]) === RouteParamtypes.QUERY);
}
