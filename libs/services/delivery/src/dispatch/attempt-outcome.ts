import { DELIVERY_RESPONSE_EXCERPT_BYTES, DeliveryErrorCode } from '@cars/contracts';

/** What one attempt came to, as the delivery record keeps it. */
export interface AttemptOutcome {
  succeeded: boolean;
  status: number | null;
  error: DeliveryErrorCode | null;
  excerpt: string | null;
  durationMs: number;
}

/** Any 2xx is success; any other status, a redirect included (never followed), is a failure (docs/api/webhooks.md). */
export function outcomeOfResponse(status: number, body: Buffer, durationMs: number): AttemptOutcome {
  const succeeded = status >= 200 && status < 300;
  return {
    succeeded,
    status,
    error: succeeded ? null : status >= 300 && status < 400 ? 'redirect' : 'http_status',
    excerpt: body.length === 0 ? null : excerptOf(body),
    durationMs,
  };
}

/** At most 4 KB of the receiver's body, cut on a character boundary. */
export function excerptOf(body: Buffer): string {
  const cut = body.subarray(0, DELIVERY_RESPONSE_EXCERPT_BYTES).toString('utf8');
  return body.length > DELIVERY_RESPONSE_EXCERPT_BYTES ? cut.replace(/\uFFFD$/, '') : cut;
}

const TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT', 'ABORT_ERR', '23']);

/** An error of the HTTP exchange → the record's short code. */
export function errorCodeOf(error: unknown): DeliveryErrorCode {
  const e = error as { code?: unknown; name?: unknown; cause?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : typeof e?.code === 'number' ? String(e.code) : '';
  if (code === 'DESTINATION_BLOCKED') return 'destination_blocked';
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError' || TIMEOUTS.has(code)) return 'timeout';
  if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || code.includes('CERT') || code === 'DEPTH_ZERO_SELF_SIGNED_CERT' || code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' || code === 'SELF_SIGNED_CERT_IN_CHAIN' || code === 'EPROTO') {
    return 'tls_error';
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns_error';
  if (e?.cause && e.cause !== error) return errorCodeOf(e.cause);
  return 'connect_error';
}
