/**
 * Compact source form of the vehicle catalog (the data files) and its expanded public form.
 *
 * A model is written as a tuple `[name, firstYear, lastYear, medianUsd, body?, engine?, extra?]`:
 * - `medianUsd`: median price in USD of a good example sold in 2024 (the market index of the
 *   generator moves it over time); `extra.a` gives year anchors `[year, medianUsd]` instead, for
 *   models whose value depends strongly on the model year (interpolated in log space).
 * - `body`: one of BODY_CODES' keys.
 * - `extra.v`: listing variants, the way sources write the model (mapped back to the canonical
 *   model by normalization); `extra.d`: drivetrain; `extra.w`: relative popularity (default by
 *   rank in the make's list); `extra.s`: log-normal sigma (default by price level); `extra.t`:
 *   transmission kind when not the era default.
 */
export const BODY_CODES = {
  C: 'Coupe',
  V: 'Convertible',
  S: 'Sedan',
  W: 'Wagon',
  H: 'Hatchback',
  R: 'Roadster',
  T: 'Pickup',
  U: 'SUV',
  M: 'Motorcycle',
  N: 'Van',
  G: 'Targa',
  F: 'Fastback',
  X: 'Spyder',
} as const;
export type BodyCode = keyof typeof BODY_CODES;
export type BodyStyle = (typeof BODY_CODES)[BodyCode];

export type Drivetrain = 'RWD' | 'FWD' | 'AWD' | '4WD';
export type TransmissionKind = 'manual' | 'auto' | 'dct' | 'sequential';

export interface ModelExtra {
  /** Listing variants (how sources write this model). */
  readonly v?: readonly string[];
  /** Price anchors `[modelYear, medianUsd]`, ascending by year. */
  readonly a?: readonly (readonly [number, number])[];
  readonly d?: Drivetrain;
  readonly w?: number;
  readonly s?: number;
  readonly t?: TransmissionKind;
}

export type ModelSpec = readonly [
  name: string,
  firstYear: number,
  lastYear: number,
  medianUsd: number,
  body?: BodyCode,
  engine?: string,
  extra?: ModelExtra,
];

export type VehicleKind = 'car' | 'motorcycle';

export interface MakeSpec {
  readonly name: string;
  /** ISO 3166-1 alpha-2 country of origin. */
  readonly country: string;
  /** Relative share of listings. */
  readonly weight: number;
  /** Listing spellings other than the canonical name (abbreviations, misspellings). */
  readonly aliases?: readonly string[];
  /** VIN world manufacturer identifiers (first three characters) used from 1981 on. */
  readonly wmi?: readonly string[];
  /** Default drivetrain of the make's models. */
  readonly drive?: Drivetrain;
  readonly kind?: VehicleKind;
  /** Default engine description when a model gives none. */
  readonly engine?: string;
  readonly models: readonly ModelSpec[];
}
