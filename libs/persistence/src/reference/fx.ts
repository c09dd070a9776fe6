/**
 * Shipped monthly FX table: US dollars per one unit of GBP, EUR and AUD (USD is 1), for every
 * month from 2016-01 to 2026-12.
 *
 * The values are approximations (rounded to three decimals) of the public monthly averages of
 * daily reference rates — the U.S. Federal Reserve's H.10 "Foreign Exchange Rates" release
 * (noon buying rates in New York), which agree with the ECB euro reference rates to within a few
 * tenths of a percent at monthly granularity. They are good enough for converting auction prices
 * into comparable USD amounts for pricing statistics; they are not accounting rates.
 *
 * The latest month with a known average is LAST_KNOWN_MONTH; every later month up to 2026-12 reuses
 * its value (and months after 2026-12 reuse it too, so conversions never fail on date alone).
 * Months before 2016-01 use 2016-01.
 */

export const FX_FIRST_MONTH = '2016-01';
export const FX_LAST_MONTH = '2026-12';
export const LAST_KNOWN_MONTH = '2025-06';

/** One row per year from 2016, twelve monthly averages each (USD per unit). */
const KNOWN: Record<'GBP' | 'EUR' | 'AUD', readonly (readonly number[])[]> = {
  GBP: [
    /* 2016 */ [1.439, 1.43, 1.423, 1.432, 1.452, 1.422, 1.314, 1.311, 1.315, 1.235, 1.243, 1.236],
    /* 2017 */ [1.234, 1.249, 1.236, 1.265, 1.293, 1.281, 1.301, 1.293, 1.334, 1.317, 1.321, 1.341],
    /* 2018 */ [1.382, 1.397, 1.398, 1.408, 1.348, 1.329, 1.316, 1.289, 1.304, 1.297, 1.289, 1.267],
    /* 2019 */ [1.29, 1.302, 1.318, 1.303, 1.286, 1.266, 1.246, 1.217, 1.234, 1.266, 1.288, 1.311],
    /* 2020 */ [1.309, 1.296, 1.236, 1.242, 1.229, 1.252, 1.268, 1.313, 1.293, 1.298, 1.318, 1.343],
    /* 2021 */ [1.364, 1.385, 1.387, 1.383, 1.409, 1.398, 1.38, 1.379, 1.373, 1.369, 1.345, 1.326],
    /* 2022 */ [1.354, 1.354, 1.317, 1.296, 1.244, 1.232, 1.199, 1.196, 1.132, 1.129, 1.173, 1.218],
    /* 2023 */ [1.222, 1.21, 1.215, 1.243, 1.244, 1.262, 1.286, 1.27, 1.239, 1.218, 1.241, 1.266],
    /* 2024 */ [1.271, 1.263, 1.271, 1.251, 1.263, 1.271, 1.286, 1.294, 1.322, 1.305, 1.272, 1.264],
    /* 2025 */ [1.237, 1.253, 1.291, 1.313, 1.336, 1.355],
  ],
  EUR: [
    /* 2016 */ [1.086, 1.11, 1.113, 1.134, 1.131, 1.123, 1.107, 1.121, 1.121, 1.103, 1.08, 1.054],
    /* 2017 */ [1.063, 1.065, 1.069, 1.072, 1.106, 1.123, 1.152, 1.181, 1.191, 1.176, 1.174, 1.184],
    /* 2018 */ [1.22, 1.235, 1.234, 1.228, 1.182, 1.168, 1.168, 1.155, 1.166, 1.148, 1.137, 1.138],
    /* 2019 */ [1.142, 1.135, 1.13, 1.124, 1.119, 1.13, 1.122, 1.113, 1.1, 1.106, 1.105, 1.111],
    /* 2020 */ [1.11, 1.091, 1.107, 1.087, 1.091, 1.126, 1.146, 1.183, 1.179, 1.177, 1.184, 1.217],
    /* 2021 */ [1.217, 1.21, 1.19, 1.197, 1.215, 1.205, 1.182, 1.177, 1.177, 1.16, 1.141, 1.13],
    /* 2022 */ [1.131, 1.134, 1.101, 1.081, 1.057, 1.058, 1.018, 1.013, 0.99, 0.983, 1.02, 1.059],
    /* 2023 */ [1.078, 1.071, 1.071, 1.097, 1.087, 1.084, 1.106, 1.091, 1.068, 1.056, 1.081, 1.09],
    /* 2024 */ [1.091, 1.079, 1.087, 1.072, 1.081, 1.076, 1.084, 1.101, 1.111, 1.09, 1.063, 1.048],
    /* 2025 */ [1.035, 1.041, 1.081, 1.123, 1.128, 1.153],
  ],
  AUD: [
    /* 2016 */ [0.701, 0.714, 0.748, 0.762, 0.73, 0.738, 0.753, 0.762, 0.759, 0.761, 0.752, 0.735],
    /* 2017 */ [0.746, 0.766, 0.762, 0.754, 0.744, 0.754, 0.778, 0.792, 0.797, 0.778, 0.761, 0.759],
    /* 2018 */ [0.791, 0.786, 0.776, 0.767, 0.753, 0.749, 0.74, 0.73, 0.723, 0.71, 0.723, 0.717],
    /* 2019 */ [0.714, 0.713, 0.709, 0.712, 0.694, 0.693, 0.699, 0.676, 0.68, 0.68, 0.681, 0.686],
    /* 2020 */ [0.683, 0.664, 0.617, 0.634, 0.652, 0.689, 0.708, 0.72, 0.722, 0.711, 0.726, 0.752],
    /* 2021 */ [0.771, 0.778, 0.772, 0.772, 0.776, 0.759, 0.741, 0.731, 0.73, 0.745, 0.728, 0.715],
    /* 2022 */ [0.715, 0.718, 0.742, 0.737, 0.708, 0.703, 0.687, 0.697, 0.666, 0.637, 0.663, 0.675],
    /* 2023 */ [0.695, 0.689, 0.668, 0.671, 0.668, 0.674, 0.673, 0.65, 0.643, 0.635, 0.653, 0.667],
    /* 2024 */ [0.666, 0.655, 0.656, 0.654, 0.662, 0.665, 0.668, 0.671, 0.681, 0.671, 0.653, 0.636],
    /* 2025 */ [0.627, 0.631, 0.629, 0.631, 0.643, 0.648],
  ],
};

export const FX_CURRENCIES = ['USD', 'GBP', 'EUR', 'AUD'] as const;
export type FxCurrency = (typeof FX_CURRENCIES)[number];

function monthIndex(month: string): number {
  const m = /^(\d{4})-(\d{2})$/.exec(month);
  if (!m) throw new Error(`invalid month (expected YYYY-MM): ${month}`);
  const mm = Number(m[2]);
  if (mm < 1 || mm > 12) throw new Error(`invalid month (expected YYYY-MM): ${month}`);
  return (Number(m[1]) - 2016) * 12 + (mm - 1);
}

function monthLabel(index: number): string {
  const year = 2016 + Math.floor(index / 12);
  return `${year}-${String((index % 12) + 1).padStart(2, '0')}`;
}

const LAST_KNOWN_INDEX = monthIndex(LAST_KNOWN_MONTH);
const TABLE_END_INDEX = monthIndex(FX_LAST_MONTH);

/** The full shipped table, one rate per currency per month 2016-01..2026-12 (USD per unit). */
export const FX_TABLE: Readonly<Record<string, Readonly<Record<FxCurrency, number>>>> = (() => {
  const table: Record<string, Record<FxCurrency, number>> = {};
  for (let i = 0; i <= TABLE_END_INDEX; i++) {
    const k = Math.min(i, LAST_KNOWN_INDEX);
    const row = Math.floor(k / 12);
    const col = k % 12;
    table[monthLabel(i)] = {
      USD: 1,
      GBP: KNOWN.GBP[row][col],
      EUR: KNOWN.EUR[row][col],
      AUD: KNOWN.AUD[row][col],
    };
  }
  return table;
})();

export function isFxCurrency(currency: string): currency is FxCurrency {
  return (FX_CURRENCIES as readonly string[]).includes(currency);
}

/**
 * US dollars per one unit of `currency` in `month` (YYYY-MM). Months outside the table are
 * clamped to its ends. Throws for a currency the table does not know or a malformed month.
 */
export function usdRate(currency: string, month: string): number {
  const code = currency.toUpperCase();
  if (!isFxCurrency(code)) throw new Error(`unknown currency: ${currency}`);
  const index = Math.max(0, Math.min(monthIndex(month), TABLE_END_INDEX));
  return FX_TABLE[monthLabel(index)][code];
}

/**
 * `amount` in `currency` converted to whole US dollars at the rate of the month of `date`
 * (YYYY-MM-DD, or any string starting with it such as an ISO timestamp).
 */
export function toUsd(amount: number, currency: string, date: string): number {
  if (!/^\d{4}-\d{2}/.test(date)) throw new Error(`invalid date (expected YYYY-MM-DD): ${date}`);
  return Math.round(amount * usdRate(currency, date.slice(0, 7)));
}

/** `usdAmount` converted to whole units of `currency` at the rate of the month of `date`. */
export function fromUsd(usdAmount: number, currency: string, date: string): number {
  if (!/^\d{4}-\d{2}/.test(date)) throw new Error(`invalid date (expected YYYY-MM-DD): ${date}`);
  return Math.round(usdAmount / usdRate(currency, date.slice(0, 7)));
}
