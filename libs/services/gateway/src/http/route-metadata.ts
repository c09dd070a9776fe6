import { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';

/** Per handler, per controller class: metadata key → value (method's over class's). */
const cache = new WeakMap<object, WeakMap<object, Map<string, unknown>>>();

/**
 * A route's metadata for `key` — the handler's, else its controller's — read once per handler and
 * class: decorators do not change at run time, and the guards ask on every request.
 */
export function routeMetadata<T>(reflector: Reflector, context: ExecutionContext, key: string): T | undefined {
  const handler = context.getHandler();
  const controller = context.getClass();
  let byClass = cache.get(handler);
  if (!byClass) {
    byClass = new WeakMap();
    cache.set(handler, byClass);
  }
  let values = byClass.get(controller);
  if (!values) {
    values = new Map();
    byClass.set(controller, values);
  }
  if (values.has(key)) return values.get(key) as T | undefined;
  const value = reflector.getAllAndOverride<T | undefined>(key, [handler, controller]);
  values.set(key, value);
  return value;
}
