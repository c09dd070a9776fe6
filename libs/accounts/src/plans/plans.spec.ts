import { effectivePlan, formatLimit, isPlanId, PLANS } from './plans';

describe('plans', () => {
  it('knows the four plans and their monthly limits', () => {
    expect(Object.values(PLANS).map((p) => [p.id, p.name, p.monthlyLimit, p.paid])).toEqual([
      ['free', 'Free', 100, false],
      ['1k', '1K', 1000, true],
      ['10k', '10K', 10000, true],
      ['100k', '100K', 100000, true],
    ]);
  });

  it('validates plan ids', () => {
    expect(isPlanId('10k')).toBe(true);
    expect(isPlanId('10K')).toBe(false);
    expect(isPlanId('toString')).toBe(false);
    expect(isPlanId(undefined)).toBe(false);
  });

  it('treats an expired plan as free, and an unexpired or open-ended one as itself', () => {
    const now = new Date('2026-11-21T12:00:00Z');
    expect(effectivePlan({ plan: '10k', planExpiresAt: null }, now).id).toBe('10k');
    expect(effectivePlan({ plan: '10k', planExpiresAt: new Date('2026-11-21T12:00:01Z') }, now).id).toBe('10k');
    expect(effectivePlan({ plan: '10k', planExpiresAt: new Date('2026-11-21T12:00:00Z') }, now).id).toBe('free');
    expect(effectivePlan({ plan: '1k', planExpiresAt: new Date('2026-01-01T00:00:00Z') }, now).id).toBe('free');
  });

  it('formats limits with thousands separators', () => {
    expect(formatLimit(1000)).toBe('1,000');
    expect(formatLimit(100000)).toBe('100,000');
    expect(formatLimit(100)).toBe('100');
  });
});
