/**
 * Exponential backoff: `baseMs` after the first failure, doubling per further failure, capped at
 * `maxMs`. One rule for every retry loop that waits out a broker or database outage.
 */
export function backoffDelay(failures: number, options: { baseMs: number; maxMs: number }): number {
  if (failures <= 0) return 0;
  const exponent = Math.min(failures - 1, 30);
  return Math.min(options.maxMs, options.baseMs * 2 ** exponent);
}
