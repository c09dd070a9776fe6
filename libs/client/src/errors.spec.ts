import { apiErrorFrom, parseRateLimit, parseRetryAfter, RateLimitError } from './errors';

const headers = (values: Record<string, string>) => ({ get: (name: string) => values[name.toLowerCase()] ?? null });

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-25T10:00:00Z');
  it.each([
    ['1', 1],
    [' 30 ', 30],
    ['Wed, 25 Nov 2026 10:00:05 GMT', 5],
    ['Wed, 25 Nov 2026 09:00:00 GMT', 0],
    ['soon', undefined],
    ['', undefined],
  ])('%j → %s seconds', (value, seconds) => {
    expect(parseRetryAfter(value, now)).toBe(seconds);
  });

  it('is undefined without the header', () => {
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

describe('parseRateLimit', () => {
  it('reads the three X-RateLimit headers, or nothing when one is missing', () => {
    expect(parseRateLimit(headers({ 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '7', 'x-ratelimit-reset': '1767225600' }))).toEqual({
      limit: 100,
      remaining: 7,
      resetsAt: new Date('2026-01-01T00:00:00Z'),
    });
    expect(parseRateLimit(headers({ 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '7' }))).toBeUndefined();
  });
});

describe('RateLimitError kind', () => {
  const make = (message: string, values: Record<string, string>) =>
    apiErrorFrom({ status: 429, headers: headers(values), body: { error: 'Rate Limit Exceeded', message } }) as RateLimitError;

  it('is burst with a Retry-After, monthly by its message or without one', () => {
    expect(make('Burst limit exceeded: … retry after 1 s', { 'retry-after': '1' }).kind).toBe('burst');
    expect(make('Monthly request limit of 100 for the Free plan exceeded; …', { 'x-ratelimit-remaining': '0' }).kind).toBe('monthly');
    // Even if a Retry-After came with it, the monthly allowance is not waited out.
    expect(make('Monthly request limit of 100 for the Free plan exceeded', { 'retry-after': '86400' }).kind).toBe('monthly');
    expect(make('Rate limited', {}).kind).toBe('monthly');
  });

  it('ignores a malformed details member', () => {
    const error = apiErrorFrom({ status: 400, headers: headers({}), body: { error: 'Validation Error', message: 'x', details: 'nope' } });
    expect(error.details).toBeUndefined();
  });
});
