import { RpcReply } from '@cars/contracts';
import { ApiException, unwrapReply } from '../http/api-exception';

/**
 * The reply of the query or stats service → its value, or its error as the HTTP error. A 503 of
 * theirs (a statement stopped at QUERY_STATEMENT_TIMEOUT_MS) says when to try again, as the
 * gateway's own 503s do: `Retry-After: 1`.
 */
export function answerOf<T>(reply: RpcReply<T>): T {
  if (!reply.ok && reply.status === 503) throw new ApiException(503, reply.body, { 'retry-after': '1' });
  return unwrapReply(reply);
}
