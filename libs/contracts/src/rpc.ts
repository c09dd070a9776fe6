import { ClassConstructor } from 'class-transformer';
import { ErrorBody, validationError } from './errors';
import { validatePlain } from './validation';

/**
 * What a service replies to an RPC request: a value, or an error the gateway turns into the
 * HTTP error envelope with `status`.
 */
/** A service's answer: its value, or an HTTP error (and, for a conflict that passes, when to retry: `Retry-After`). */
export type RpcReply<T> = { ok: true; value: T } | { ok: false; status: number; body: ErrorBody; retryAfterSeconds?: number };

export const rpcOk = <T>(value: T): RpcReply<T> => ({ ok: true, value });
export const rpcError = (status: number, body: ErrorBody, options: { retryAfterSeconds?: number } = {}): RpcReply<never> =>
  options.retryAfterSeconds === undefined ? { ok: false, status, body } : { ok: false, status, body, retryAfterSeconds: options.retryAfterSeconds };

/**
 * An RPC handler's payload, validated again on consume (the gateway validated it already, but a
 * service trusts no producer): the method receives the DTO instance, or the caller gets a 400
 * reply naming each bad parameter without the method running. Put it below `@MessagePattern`.
 */
export function ValidatePayload<T extends object>(dto: ClassConstructor<T>): MethodDecorator {
  return (_target, _key, descriptor: PropertyDescriptor) => {
    const handle = descriptor.value as (payload: T, ...rest: unknown[]) => unknown;
    descriptor.value = function (this: unknown, payload: unknown, ...rest: unknown[]) {
      const input = validatePlain(dto, payload);
      if (!input.ok) return Promise.resolve(rpcError(400, validationError(input.details)));
      return handle.call(this, input.value, ...rest);
    };
    Object.defineProperty(descriptor.value, 'name', { value: handle.name });
  };
}
