import { DateTime } from 'luxon';

/**
 * Source wall-clock times (no UTC offset, read in the source's IANA zone) ↔ UTC instants.
 * Offsets are looked up once per zone and local hour (cached): a DST change is resolved the way
 * luxon resolves it, without paying luxon's parsing cost for every bid.
 */
const WALL = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/;
const offsets = new Map<string, number>();

export class InvalidTimeError extends Error {}

export interface WallClock {
  /** YYYY-MM-DDTHH:MM:SS in the source's zone. */
  local: string;
  /** ISO 8601 UTC instant. */
  utc: string;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function lookupOffset(zone: string, y: number, mo: number, d: number, h: number): number {
  const dt = DateTime.fromObject({ year: y, month: mo, day: d, hour: h, minute: 30 }, { zone });
  if (!dt.isValid) throw new InvalidTimeError(`invalid time zone or time: ${zone} ${y}-${mo}-${d}T${h}`);
  return dt.offset;
}

const daysIn = (y: number, mo: number) => new Date(Date.UTC(y, mo, 0)).getUTCDate();

/** A cached offset for a span whose two ends agree; NaN when a DST change falls inside it. */
function spanOffset(key: string, first: () => number, last: () => number): number {
  let offset = offsets.get(key);
  if (offset === undefined) {
    const a = first();
    offset = a === last() ? a : Number.NaN;
    if (offsets.size > 200000) offsets.clear();
    offsets.set(key, offset);
  }
  return offset;
}

/**
 * UTC offset (minutes) of a wall-clock hour in a zone, cached per month when the offset is the
 * same at both ends of the month (ten months a year), else per day, and per hour on the day a
 * DST change happens.
 */
function offsetMinutes(zone: string, y: number, mo: number, d: number, h: number): number {
  const monthKey = `${zone}|${y}-${mo}`;
  const month = spanOffset(
    monthKey,
    () => lookupOffset(zone, y, mo, 1, 0),
    () => lookupOffset(zone, y, mo, daysIn(y, mo), 23),
  );
  if (!Number.isNaN(month)) return month;
  const dayKey = `${monthKey}-${d}`;
  const day = spanOffset(
    dayKey,
    () => lookupOffset(zone, y, mo, d, 0),
    () => lookupOffset(zone, y, mo, d, 23),
  );
  if (!Number.isNaN(day)) return day;
  return spanOffset(`${dayKey}T${h}`, () => lookupOffset(zone, y, mo, d, h), () => lookupOffset(zone, y, mo, d, h));
}

/** Parses a source time; a value with an offset is converted to the source's wall clock. */
export function parseWallClock(value: string, zone: string): WallClock {
  const m = WALL.exec(value);
  if (!m) throw new InvalidTimeError(`invalid date-time: ${value}`);
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0));
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  const asUtc = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const check = new Date(asUtc);
  if (
    check.getUTCFullYear() !== y || check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d ||
    h > 23 || mi > 59 || s > 59
  ) {
    throw new InvalidTimeError(`invalid date-time: ${value}`);
  }
  if (m[8]) {
    const instant = DateTime.fromISO(value.replace(' ', 'T'), { setZone: true });
    if (!instant.isValid) throw new InvalidTimeError(`invalid date-time: ${value}`);
    const local = instant.setZone(zone);
    return { local: local.toFormat("yyyy-MM-dd'T'HH:mm:ss"), utc: instant.toUTC().toISO()! };
  }
  const offset = offsetMinutes(zone, y, mo, d, h);
  const local = `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${pad(s)}`;
  return { local, utc: new Date(asUtc - offset * 60000).toISOString() };
}

/** A real calendar date YYYY-MM-DD, or an error. */
export function parseDate(value: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) throw new InvalidTimeError(`invalid date: ${value}`);
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  if (date.getUTCMonth() !== Number(m[2]) - 1 || date.getUTCDate() !== Number(m[3])) {
    throw new InvalidTimeError(`invalid date: ${value}`);
  }
  return value;
}

/** An ISO 8601 instant → ISO UTC string, or an error. */
export function parseInstant(value: string): string {
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw new InvalidTimeError(`invalid instant: ${value}`);
  return new Date(time).toISOString();
}
