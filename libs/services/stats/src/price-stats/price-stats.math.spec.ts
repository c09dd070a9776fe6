import { medianOf, monthLabel, roundedRatio, trendMonths } from './price-stats.math';

describe('price-stats math', () => {
  it('rounds ratios half up on exact integers', () => {
    expect(roundedRatio(1n, 3n, 2)).toBe(0.33);
    expect(roundedRatio(2n, 3n, 2)).toBe(0.67);
    expect(roundedRatio(1n, 8n, 2)).toBe(0.13); // 0.125 → 0.13
    expect(roundedRatio(5n, 2n, 0)).toBe(3);
    expect(roundedRatio(100_001n, 2n, 2)).toBe(50000.5);
    expect(roundedRatio(2n, 3n, 4)).toBe(0.6667);
    expect(roundedRatio(0n, 7n, 2)).toBe(0);
    expect(roundedRatio(7n, 0n, 2)).toBe(0);
    // A case where a floating-point division would land a hair below the half.
    expect(roundedRatio(1_000_000_000_000_005n, 1000n, 2)).toBe(1_000_000_000_000.01);
  });

  it('takes the median from one or two middle values', () => {
    expect(medianOf([])).toBe(0);
    expect(medianOf([42_000])).toBe(42_000);
    expect(medianOf([42_000, 42_001])).toBe(42_000.5);
    expect(medianOf([10, 10])).toBe(10);
  });

  it('lists the current UTC month and the 11 before it, oldest first', () => {
    expect(trendMonths(new Date('2026-03-31T23:59:59Z'))).toEqual([
      '2025-04', '2025-05', '2025-06', '2025-07', '2025-08', '2025-09',
      '2025-10', '2025-11', '2025-12', '2026-01', '2026-02', '2026-03',
    ]);
    // 00:30 on 1 February in UTC+1 is still January in UTC.
    expect(trendMonths(new Date('2026-02-01T00:30:00+01:00')).at(-1)).toBe('2026-01');
    expect(monthLabel(new Date('2026-12-15T00:00:00Z'))).toBe('2026-12');
  });
});
