import { countsAsUsage, MeterTicket, rateLimitHeaders, ticketHeaders } from './usage-meter';

describe('what counts and the X-RateLimit headers', () => {
  it('counts 2xx, 3xx and 404; not 400, 401, 403, 409, 429 or 5xx', () => {
    for (const status of [200, 201, 204, 304, 404]) expect([status, countsAsUsage(status)]).toEqual([status, true]);
    for (const status of [400, 401, 403, 409, 429, 500, 502, 503]) expect([status, countsAsUsage(status)]).toEqual([status, false]);
  });

  it('gives the reset as Unix seconds of the next period, and never a negative remainder', () => {
    expect(rateLimitHeaders(1000, -3, new Date('2026-12-01T00:00:00Z'))).toEqual({
      'x-ratelimit-limit': '1000',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '1796083200',
    });
  });

  it('shows the unit as given back on a response that does not count', () => {
    const ticket: MeterTicket = {
      reservation: { accountId: 'a', period: '2026-11-01', units: 1 },
      limit: 100,
      remaining: 41,
      periodEnd: new Date('2026-12-01T00:00:00Z'),
      settled: false,
    };
    expect(ticketHeaders(ticket, 200)['x-ratelimit-remaining']).toBe('41');
    expect(ticketHeaders(ticket, 404)['x-ratelimit-remaining']).toBe('41');
    expect(ticketHeaders(ticket, 400)['x-ratelimit-remaining']).toBe('42');
  });
});
