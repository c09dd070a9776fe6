import { billingPeriod } from './billing-period';

describe('billingPeriod', () => {
  it('is the calendar month in UTC', () => {
    const p = billingPeriod(new Date('2026-11-21T12:34:56Z'));
    expect(p.key).toBe('2026-11-01');
    expect(p.start.toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(p.end.toISOString()).toBe('2026-12-01T00:00:00.000Z');
  });

  it('rolls over the year and is decided in UTC, not local time', () => {
    const p = billingPeriod(new Date('2026-12-31T23:59:59.999Z'));
    expect(p.key).toBe('2026-12-01');
    expect(p.end.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(billingPeriod(new Date('2027-01-01T00:00:00Z')).key).toBe('2027-01-01');
    // 2026-03-01T00:30 in UTC is still February 28th in New York.
    expect(billingPeriod(new Date('2026-03-01T00:30:00Z')).key).toBe('2026-03-01');
  });
});
