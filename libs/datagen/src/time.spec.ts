import { DAY_MS, HOUR_MS, formatWallClock, localToUtc, offsetMinutes, parseDate, utcToLocal, type SourceZone } from './time';

const ZONES: SourceZone[] = ['America/Los_Angeles', 'America/New_York', 'Europe/London'];

const formatters = new Map<string, Intl.DateTimeFormat>();

function intlOffsetMinutes(zone: string, utcMs: number): number {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, format);
  }
  const parts = format.formatToParts(new Date(utcMs));
  const get = (type: string): number => Number(parts.find((p) => p.type === type)!.value);
  const local = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return Math.round((local - utcMs) / 60000);
}

describe('time zones', () => {
  it('agree with the IANA database every 7 hours from 2017 to 2027', () => {
    for (const zone of ZONES) {
      for (let t = Date.UTC(2017, 0, 1); t < Date.UTC(2027, 11, 31); t += 7 * HOUR_MS) {
        if (offsetMinutes(zone, t) !== intlOffsetMinutes(zone, t)) throw new Error(`${zone} ${new Date(t).toISOString()}`);
      }
    }
  });

  it('agree around every transition to the minute', () => {
    for (const zone of ZONES) {
      for (let year = 2018; year <= 2026; year++) {
        for (const month of [2, 9, 10]) {
          for (let day = 0; day < 31; day++) {
            for (let minute = 0; minute < 24 * 60; minute += 60) {
              const t = Date.UTC(year, month, 1) + day * DAY_MS + minute * 60000;
              if (offsetMinutes(zone, t) !== intlOffsetMinutes(zone, t)) throw new Error(`${zone} ${new Date(t).toISOString()}`);
            }
          }
        }
      }
    }
  });

  it('round-trips wall-clock times outside the transition hours', () => {
    for (const zone of ZONES) {
      for (let local = Date.UTC(2018, 0, 1, 12); local < Date.UTC(2027, 0, 1); local += 13 * HOUR_MS) {
        const hour = new Date(local).getUTCHours();
        if (hour >= 0 && hour < 3) continue;
        expect(utcToLocal(zone, localToUtc(zone, local))).toBe(local);
      }
    }
    // 19:00 in Los Angeles on 2024-05-03 is 02:00 UTC the next day (PDT).
    expect(new Date(localToUtc('America/Los_Angeles', Date.UTC(2024, 4, 3, 19))).toISOString()).toBe('2024-05-04T02:00:00.000Z');
    expect(formatWallClock(utcToLocal('Europe/London', Date.UTC(2024, 0, 15, 12)))).toBe('2024-01-15T12:00:00');
  });

  it('parses dates strictly', () => {
    expect(parseDate('2024-02-29')).toBe(Date.UTC(2024, 1, 29));
    expect(() => parseDate('2023-02-29')).toThrow(/invalid date/);
    expect(() => parseDate('2024-2-1')).toThrow(/invalid date/);
  });
});
