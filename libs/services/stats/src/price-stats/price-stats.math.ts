import { PRICE_TREND_MONTHS } from '@cars/contracts';

/**
 * `numerator / denominator` rounded half up to `decimals` places, computed on integers so that no
 * binary floating-point error can move a result across a rounding boundary. Both must be ≥ 0;
 * a zero denominator gives 0.
 */
export function roundedRatio(numerator: bigint, denominator: bigint, decimals: number): number {
  if (denominator === 0n) return 0;
  if (numerator < 0n || denominator < 0n) throw new RangeError('roundedRatio expects non-negative operands');
  const scale = 10n ** BigInt(decimals);
  const scaled = (numerator * scale * 2n + denominator) / (denominator * 2n);
  return Number(scaled) / Number(scale);
}

/** Exact median from the one (odd count) or two (even count) middle values; 0 without values. */
export function medianOf(middle: readonly number[]): number {
  if (middle.length === 0) return 0;
  if (middle.length === 1) return middle[0];
  return (middle[0] + middle[1]) / 2;
}

/** `YYYY-MM` of a date, in UTC. */
export function monthLabel(date: Date): string {
  return `${date.getUTCFullYear()}-${String(date.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The price-trend months at `now`: the current calendar month (UTC) and the 11 before, oldest first. */
export function trendMonths(now: Date): string[] {
  const months: string[] = [];
  for (let back = PRICE_TREND_MONTHS - 1; back >= 0; back--) {
    months.push(monthLabel(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1))));
  }
  return months;
}
