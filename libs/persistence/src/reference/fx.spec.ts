import { FX_CURRENCIES, FX_TABLE, LAST_KNOWN_MONTH, fromUsd, toUsd, usdRate } from './fx';

describe('fx', () => {
  it('has a rate for every currency and every month 2016-01..2026-12', () => {
    const months = Object.keys(FX_TABLE);
    expect(months.length).toBe(11 * 12);
    expect(months[0]).toBe('2016-01');
    expect(months[months.length - 1]).toBe('2026-12');
    for (const month of months) {
      for (const currency of FX_CURRENCIES) expect(FX_TABLE[month][currency]).toBeGreaterThan(0);
      expect(FX_TABLE[month].USD).toBe(1);
    }
  });

  it('stays close to the published monthly averages', () => {
    for (const month of Object.keys(FX_TABLE)) {
      const row = FX_TABLE[month];
      expect(row.GBP).toBeGreaterThan(1.05);
      expect(row.GBP).toBeLessThan(1.5);
      expect(row.EUR).toBeGreaterThan(0.95);
      expect(row.EUR).toBeLessThan(1.3);
      expect(row.AUD).toBeGreaterThan(0.6);
      expect(row.AUD).toBeLessThan(0.82);
    }
    // Well-known points: sterling after the 2016 referendum and in the September 2022 slump,
    // euro parity in 2022.
    expect(usdRate('GBP', '2016-05')).toBeGreaterThan(1.4);
    expect(usdRate('GBP', '2016-10')).toBeLessThan(1.26);
    expect(usdRate('GBP', '2022-09')).toBeLessThan(1.15);
    expect(usdRate('EUR', '2022-09')).toBeLessThan(1.0);
    expect(usdRate('AUD', '2020-03')).toBeLessThan(0.65);
  });

  it('reuses the latest known month for later months and clamps outside the table', () => {
    const last = usdRate('GBP', LAST_KNOWN_MONTH);
    expect(usdRate('GBP', '2026-12')).toBe(last);
    expect(usdRate('GBP', '2030-01')).toBe(last);
    expect(usdRate('EUR', '2010-06')).toBe(usdRate('EUR', '2016-01'));
    expect(usdRate('usd', '2020-01')).toBe(1);
  });

  it('converts to whole US dollars at the rate of the month', () => {
    expect(toUsd(10000, 'USD', '2024-05-03')).toBe(10000);
    expect(toUsd(10000, 'GBP', '2024-05-03')).toBe(Math.round(10000 * usdRate('GBP', '2024-05')));
    expect(toUsd(12345, 'EUR', '2022-09-30T12:00:00')).toBe(Math.round(12345 * usdRate('EUR', '2022-09')));
    expect(Number.isInteger(toUsd(999.99, 'AUD', '2019-01-01'))).toBe(true);
    expect(fromUsd(toUsd(50000, 'GBP', '2023-03-01'), 'GBP', '2023-03-01')).toBeCloseTo(50000, -1);
  });

  it('throws for unknown currencies and malformed dates', () => {
    expect(() => usdRate('JPY', '2020-01')).toThrow(/unknown currency/);
    expect(() => toUsd(1, 'CHF', '2020-01-01')).toThrow(/unknown currency/);
    expect(() => usdRate('GBP', '2020-13')).toThrow(/invalid month/);
    expect(() => toUsd(1, 'GBP', 'yesterday')).toThrow(/invalid date/);
  });
});
