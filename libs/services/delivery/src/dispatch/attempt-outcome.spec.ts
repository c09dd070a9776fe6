import { errorCodeOf, excerptOf, outcomeOfResponse } from './attempt-outcome';

describe('attempt outcomes', () => {
  it('takes any 2xx as success, a 3xx as a redirect (never followed), anything else as an HTTP failure', () => {
    expect(outcomeOfResponse(204, Buffer.alloc(0), 12)).toEqual({ succeeded: true, status: 204, error: null, excerpt: null, durationMs: 12 });
    expect(outcomeOfResponse(301, Buffer.from('moved'), 5)).toMatchObject({ succeeded: false, error: 'redirect', excerpt: 'moved' });
    expect(outcomeOfResponse(410, Buffer.from('gone'), 5)).toMatchObject({ succeeded: false, error: 'http_status', status: 410 });
    expect(outcomeOfResponse(199, Buffer.alloc(0), 5).succeeded).toBe(false);
  });

  it('keeps at most 4 KB of the body, never half a character', () => {
    expect(excerptOf(Buffer.from('a'.repeat(5000)))).toHaveLength(4096);
    const euro = excerptOf(Buffer.from(`${'a'.repeat(4095)}€`));
    expect(euro).toBe('a'.repeat(4095));
  });

  it.each([
    [{ code: 'DESTINATION_BLOCKED' }, 'destination_blocked'],
    [{ name: 'TimeoutError' }, 'timeout'],
    [{ code: 'UND_ERR_HEADERS_TIMEOUT' }, 'timeout'],
    [{ code: 'UND_ERR_CONNECT_TIMEOUT' }, 'timeout'],
    [{ code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }, 'tls_error'],
    [{ code: 'ERR_TLS_CERT_ALTNAME_INVALID' }, 'tls_error'],
    [{ code: 'ECONNREFUSED' }, 'connect_error'],
    [{ code: 'ECONNRESET' }, 'connect_error'],
    [{ message: 'fetch failed', cause: { code: 'CERT_HAS_EXPIRED' } }, 'tls_error'],
  ])('maps %o to %s', (error, code) => {
    expect(errorCodeOf(error)).toBe(code);
  });
});
