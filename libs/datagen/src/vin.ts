/**
 * Vehicle identification numbers: 17-character VINs (ISO 3779 / 49 CFR 565 alphabet, no I, O or Q,
 * with the North American check digit in position 9 and the model-year code in position 10) for
 * model years from 1981, and shorter make-style chassis numbers before.
 */
import type { Rng } from './prng';

export const VIN_ALPHABET = 'ABCDEFGHJKLMNPRSTUVWXYZ0123456789';
const VIN_LETTERS = 'ABCDEFGHJKLMNPRSTUVWXYZ';
const DIGITS = '0123456789';
const WEIGHTS = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2];
const YEAR_CODES = 'ABCDEFGHJKLMNPRSTVWXY123456789';

function transliterate(ch: string): number {
  if (ch >= '0' && ch <= '9') return ch.charCodeAt(0) - 48;
  const values: Record<string, number> = {
    A: 1, B: 2, C: 3, D: 4, E: 5, F: 6, G: 7, H: 8,
    J: 1, K: 2, L: 3, M: 4, N: 5, P: 7, R: 9,
    S: 2, T: 3, U: 4, V: 5, W: 6, X: 7, Y: 8, Z: 9,
  };
  const v = values[ch];
  if (v === undefined) throw new Error(`invalid VIN character: ${ch}`);
  return v;
}

/** The check digit ('0'-'9' or 'X') of a 17-character VIN (position 9 is ignored). */
export function vinCheckDigit(vin: string): string {
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += transliterate(vin[i]) * WEIGHTS[i];
  const r = sum % 11;
  return r === 10 ? 'X' : String(r);
}

/** True for a well-formed 17-character VIN whose check digit is right. */
export function isValidVin(vin: string): boolean {
  if (!/^[A-HJ-NPR-Z0-9]{17}$/.test(vin)) return false;
  return vinCheckDigit(vin) === vin[8];
}

/** The model-year code of position 10 (30-year cycle starting 1980 = A). */
export function modelYearCode(year: number): string {
  return YEAR_CODES[(((year - 1980) % 30) + 30) % 30];
}

function chars(rng: Rng, alphabet: string, count: number): string {
  let out = '';
  for (let i = 0; i < count; i++) out += alphabet[Math.floor(rng.next() * alphabet.length)];
  return out;
}

/** First character of a WMI by country of origin when the catalog records none. */
const REGION_CHAR: Record<string, string> = {
  US: '1', CA: '2', MX: '3', AU: '6', JP: 'J', KR: 'K', GB: 'S', DE: 'W', IT: 'Z', FR: 'V',
  ES: 'V', SE: 'Y', NL: 'X', CZ: 'T', RU: 'X',
};

/** A 17-character VIN for a model year from 1981 on. */
export function makeVin(rng: Rng, wmis: readonly string[], country: string, year: number): string {
  const wmi = wmis.length > 0 ? rng.pick(wmis) : `${REGION_CHAR[country] ?? 'W'}${chars(rng, VIN_LETTERS, 2)}`;
  const vds = chars(rng, VIN_ALPHABET, 5);
  const plant = chars(rng, VIN_ALPHABET, 1);
  const serial = chars(rng, DIGITS, 6);
  const draft = `${wmi}${vds}0${modelYearCode(year)}${plant}${serial}`;
  return `${draft.slice(0, 8)}${vinCheckDigit(draft)}${draft.slice(9)}`;
}

/** A chassis number in the style of the make's country for a model year before 1981 (< 17 chars). */
export function makeChassisNumber(rng: Rng, make: string, country: string, year: number): string {
  const yy = String(year % 100).padStart(2, '0');
  switch (make) {
    case 'Porsche':
      return year < 1965 ? chars(rng, DIGITS, 5 + (year >= 1956 ? 1 : 0)) : `9${yy.slice(1)}${chars(rng, DIGITS, 7)}`;
    case 'Ferrari':
      return chars(rng, DIGITS, year < 1970 ? 4 : 5);
    case 'Mercedes-Benz':
      return `${chars(rng, DIGITS, 6)}-${chars(rng, DIGITS, 2)}-${chars(rng, DIGITS, 6)}`;
    case 'Chevrolet':
      return `${chars(rng, DIGITS, 5)}${yy.slice(1)}${chars(rng, 'ABCFLNST', 1)}${chars(rng, DIGITS, 6)}`;
    case 'Ford':
      return `${yy.slice(1)}${chars(rng, 'ABCDEFGHJKRST', 1)}${chars(rng, DIGITS, 2)}${chars(rng, 'ACFKRSTZ', 1)}${chars(rng, DIGITS, 6)}`;
    default:
      break;
  }
  switch (country) {
    case 'US':
      return `${chars(rng, VIN_ALPHABET, 2)}${chars(rng, DIGITS, 4 + Math.floor(rng.next() * 7))}`;
    case 'GB':
      return `${chars(rng, VIN_LETTERS, 1 + Math.floor(rng.next() * 3))}${chars(rng, DIGITS, 5)}${rng.chance(0.3) ? chars(rng, 'LRB', 1) : ''}`;
    case 'JP':
      return `${chars(rng, VIN_LETTERS, 3)}${chars(rng, DIGITS, 2)}-${chars(rng, DIGITS, 5 + Math.floor(rng.next() * 2))}`;
    case 'IT':
      return `${rng.chance(0.4) ? chars(rng, VIN_LETTERS, 2) : ''}${chars(rng, DIGITS, 6)}`;
    case 'DE':
      return chars(rng, DIGITS, 7 + Math.floor(rng.next() * 4));
    default:
      return `${chars(rng, VIN_ALPHABET, 1)}${chars(rng, DIGITS, 5 + Math.floor(rng.next() * 4))}`;
  }
}
