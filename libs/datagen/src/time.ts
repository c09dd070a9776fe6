/**
 * Wall-clock time in the sources' zones, without Intl (fast and independent of the ICU data of the
 * machine). The three zones' current daylight-saving rules hold for the whole 2007+ range the data
 * set covers:
 * - America/Los_Angeles, America/New_York: DST from the second Sunday of March, 02:00 local, to the
 *   first Sunday of November, 02:00 local.
 * - Europe/London: BST from the last Sunday of March to the last Sunday of October, 01:00 UTC.
 */
export type SourceZone = 'America/Los_Angeles' | 'America/New_York' | 'Europe/London';

export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;
export const MINUTE_MS = 60_000;

/** Day of month of the n-th (1-based) Sunday of a month. */
function nthSunday(year: number, month: number, n: number): number {
  const firstDow = new Date(Date.UTC(year, month - 1, 1)).getUTCDay();
  return 1 + ((7 - firstDow) % 7) + (n - 1) * 7;
}

function lastSunday(year: number, month: number): number {
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const lastDow = new Date(Date.UTC(year, month - 1, daysInMonth)).getUTCDay();
  return daysInMonth - lastDow;
}

const transitionCache = new Map<string, readonly [number, number]>();

/** [DST start, DST end] as UTC instants for a zone and year. */
function dstWindow(zone: SourceZone, year: number): readonly [number, number] {
  const key = `${zone}:${year}`;
  const cached = transitionCache.get(key);
  if (cached) return cached;
  let window: readonly [number, number];
  switch (zone) {
    case 'America/Los_Angeles':
      window = [Date.UTC(year, 2, nthSunday(year, 3, 2), 10), Date.UTC(year, 10, nthSunday(year, 11, 1), 9)];
      break;
    case 'America/New_York':
      window = [Date.UTC(year, 2, nthSunday(year, 3, 2), 7), Date.UTC(year, 10, nthSunday(year, 11, 1), 6)];
      break;
    case 'Europe/London':
      window = [Date.UTC(year, 2, lastSunday(year, 3), 1), Date.UTC(year, 9, lastSunday(year, 10), 1)];
      break;
  }
  transitionCache.set(key, window);
  return window;
}

function standardOffsetMinutes(zone: SourceZone): number {
  switch (zone) {
    case 'America/Los_Angeles':
      return -480;
    case 'America/New_York':
      return -300;
    case 'Europe/London':
      return 0;
  }
}

/** UTC offset in minutes of `zone` at the UTC instant `utcMs`. */
export function offsetMinutes(zone: SourceZone, utcMs: number): number {
  const year = new Date(utcMs).getUTCFullYear();
  const [start, end] = dstWindow(zone, year);
  const std = standardOffsetMinutes(zone);
  return utcMs >= start && utcMs < end ? std + 60 : std;
}

/**
 * The UTC instant of a wall-clock time given as `Date.UTC(fields)`. An ambiguous time (the repeated
 * hour in autumn) resolves to the earlier instant; a skipped time (spring) to the later offset.
 */
export function localToUtc(zone: SourceZone, localMs: number): number {
  const std = standardOffsetMinutes(zone);
  const dst = std + 60;
  const asDst = localMs - dst * MINUTE_MS;
  if (offsetMinutes(zone, asDst) === dst) return asDst;
  return localMs - std * MINUTE_MS;
}

/** The wall-clock fields (as a UTC-based millisecond value) of `utcMs` in `zone`. */
export function utcToLocal(zone: SourceZone, utcMs: number): number {
  return utcMs + offsetMinutes(zone, utcMs) * MINUTE_MS;
}

/** "YYYY-MM-DDTHH:MM:SS" of a wall-clock millisecond value (no offset). */
export function formatWallClock(localMs: number): string {
  return new Date(localMs).toISOString().slice(0, 19);
}

/** "YYYY-MM-DDTHH:MM:SSZ" of a UTC instant. */
export function formatUtc(utcMs: number): string {
  return `${new Date(utcMs).toISOString().slice(0, 19)}Z`;
}

/** "YYYY-MM-DD" of a (UTC or wall-clock) millisecond value. */
export function formatDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Milliseconds of 00:00 UTC of a "YYYY-MM-DD" date; throws when malformed or not a real date. */
export function parseDate(value: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) throw new Error(`invalid date (expected YYYY-MM-DD): ${value}`);
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (formatDate(ms) !== value) throw new Error(`invalid date: ${value}`);
  return ms;
}
