import { HttpException } from '@nestjs/common';
import { ErrorBody, RpcReply } from '@cars/contracts';

/** An HTTP error whose body is already the error envelope `{error, message, details?}` (`ErrorBody`). */
export class ApiException extends HttpException {
  constructor(
    status: number,
    readonly body: ErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body, status);
  }
}

/** A service's reply → its value, or the error it carries, thrown as the HTTP error (with `Retry-After` when it says). */
export function unwrapReply<T>(reply: RpcReply<T>): T {
  if (reply.ok) return reply.value;
  const retryAfter = reply.retryAfterSeconds;
  throw new ApiException(reply.status, reply.body, retryAfter === undefined ? {} : { 'retry-after': String(Math.max(1, Math.ceil(retryAfter))) });
}
