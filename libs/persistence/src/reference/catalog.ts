/**
 * The canonical vehicle catalog: makes, their models, and the spellings sources use for them.
 *
 * - `MAKES` are the canonical (normalized) make names with their models; a model carries its
 *   production years, a price level (median USD of a good example, in 2024 money) per model year
 *   and a log-normal sigma for the spread around it, and hints (body style, engine, drivetrain).
 * - `makeAliasEntries()` lists listing spellings → canonical make, plus spellings that are not
 *   vehicles at all (`excluded: true`: memorabilia, parts…), the shape of the `make_aliases`
 *   table (aliases lower-cased and trimmed, the way that table stores them).
 * - `modelAliasEntries()` lists listing model spellings → canonical model within a make.
 *
 * The data live in catalog-data-*.ts in a compact tuple form (see catalog-types.ts).
 */
import { AMERICAS_MAKES } from './catalog-data-americas';
import { BRITISH_MAKES } from './catalog-data-britain';
import { GERMANY_ITALY_MAKES } from './catalog-data-germany-italy';
import { WORLD_MAKES } from './catalog-data-world';
import {
  BODY_CODES,
  type BodyStyle,
  type Drivetrain,
  type MakeSpec,
  type ModelSpec,
  type TransmissionKind,
  type VehicleKind,
} from './catalog-types';

export type { BodyStyle, Drivetrain, TransmissionKind, VehicleKind } from './catalog-types';

export interface CatalogModel {
  /** Canonical model name (unique within its make). */
  readonly name: string;
  /** Canonical make name. */
  readonly make: string;
  readonly firstYear: number;
  readonly lastYear: number;
  /** Median USD price of a good example (2024 money) for the model's typical year. */
  readonly medianUsd: number;
  /** Log-normal sigma of prices around the median. */
  readonly sigma: number;
  /** Year-dependent medians `[modelYear, medianUsd]` (ascending), empty when flat. */
  readonly anchors: readonly (readonly [number, number])[];
  readonly bodyStyle: BodyStyle | null;
  readonly engine: string | null;
  readonly drivetrain: Drivetrain;
  readonly transmission: TransmissionKind | null;
  /** Listing variants: how sources write this model besides its canonical name. */
  readonly variants: readonly string[];
  /** Relative popularity within the make. */
  readonly weight: number;
  readonly kind: VehicleKind;
}

export interface CatalogMake {
  readonly name: string;
  /** ISO 3166-1 alpha-2 country of origin. */
  readonly country: string;
  /** Relative share of listings. */
  readonly weight: number;
  readonly kind: VehicleKind;
  /** Listing spellings other than the canonical name (abbreviations, misspellings). */
  readonly aliases: readonly string[];
  /** VIN world manufacturer identifiers used from 1981 on (empty: none recorded). */
  readonly wmi: readonly string[];
  readonly models: readonly CatalogModel[];
}

/**
 * Listing "makes" that are not vehicles: a source files memorabilia, parts and the like under them.
 * Observations with these makes are excluded from the data set by normalization.
 */
export const EXCLUDED_MAKE_ALIASES: readonly string[] = [
  'Memorabilia',
  'Parts',
  'Automobilia',
  'Literature',
  'Signage',
  'Wheels',
  'Engine',
  'Tools',
  'Go-Kart',
  'Pedal Car',
  'Golf Cart',
  'Boat',
  'Trailer',
  'Toy',
  'Neon Sign',
  'Other',
];

function defaultSigma(medianUsd: number): number {
  if (medianUsd < 30000) return 0.5;
  if (medianUsd < 150000) return 0.45;
  return 0.4;
}

function expandModel(make: MakeSpec, spec: ModelSpec, rank: number): CatalogModel {
  const [name, firstYear, lastYear, medianUsd, body, engine, extra] = spec;
  return {
    name,
    make: make.name,
    firstYear,
    lastYear,
    medianUsd,
    sigma: extra?.s ?? defaultSigma(medianUsd),
    anchors: extra?.a ?? [],
    bodyStyle: body ? BODY_CODES[body] : null,
    engine: engine ?? make.engine ?? null,
    drivetrain: extra?.d ?? make.drive ?? 'RWD',
    transmission: extra?.t ?? null,
    variants: extra?.v ?? [],
    weight: extra?.w ?? 1 / (1 + 0.3 * rank),
    kind: body === 'M' ? 'motorcycle' : (make.kind ?? 'car'),
  };
}

function expandMake(spec: MakeSpec): CatalogMake {
  return {
    name: spec.name,
    country: spec.country,
    weight: spec.weight,
    kind: spec.kind ?? 'car',
    aliases: spec.aliases ?? [],
    wmi: spec.wmi ?? [],
    models: spec.models.map((m, i) => expandModel(spec, m, i)),
  };
}

/** Every canonical make with its models, in a fixed order. */
export const MAKES: readonly CatalogMake[] = [
  ...AMERICAS_MAKES,
  ...GERMANY_ITALY_MAKES,
  ...BRITISH_MAKES,
  ...WORLD_MAKES,
].map(expandMake);

/** Canonical make names, sorted alphabetically (the `/makes` list before ingestion). */
export const MAKE_NAMES: readonly string[] = MAKES.map((m) => m.name).sort((a, b) => a.localeCompare(b, 'en'));

/** Every canonical model of every make. */
export const MODELS: readonly CatalogModel[] = MAKES.flatMap((m) => m.models);

/** The key aliases are stored under: trimmed, inner whitespace collapsed, lower-cased. */
export function aliasKey(value: string): string {
  return value.trim().replace(/\s+/g, ' ').toLowerCase();
}

const makesByKey = new Map<string, CatalogMake>(MAKES.map((m) => [aliasKey(m.name), m]));

export function findMake(name: string): CatalogMake | undefined {
  return makesByKey.get(aliasKey(name));
}

export type MakeAliasEntry = { alias: string; make: string; excluded: false } | { alias: string; make: null; excluded: true };

/**
 * Rows for the `make_aliases` table: every canonical name and every listing spelling of a make
 * (alias lower-cased and trimmed, see aliasKey) mapped to its canonical make, then the excluded
 * non-vehicle spellings. Aliases are unique.
 */
export function makeAliasEntries(): MakeAliasEntry[] {
  const seen = new Set<string>();
  const out: MakeAliasEntry[] = [];
  for (const make of MAKES) {
    for (const spelling of [make.name, ...make.aliases]) {
      const alias = aliasKey(spelling);
      if (seen.has(alias)) continue;
      seen.add(alias);
      out.push({ alias, make: make.name, excluded: false });
    }
  }
  for (const spelling of EXCLUDED_MAKE_ALIASES) {
    const alias = aliasKey(spelling);
    if (seen.has(alias)) continue;
    seen.add(alias);
    out.push({ alias, make: null, excluded: true });
  }
  return out;
}

export interface ModelAliasEntry {
  make: string;
  /** Lower-cased and trimmed (see aliasKey). */
  alias: string;
  model: string;
}

/**
 * Rows for the `model_aliases` table: within each make, the canonical model name and each listing
 * variant (lower-cased) mapped to the canonical model. A spelling claimed by two models of one make
 * is kept for the first only.
 */
export function modelAliasEntries(): ModelAliasEntry[] {
  const out: ModelAliasEntry[] = [];
  for (const make of MAKES) {
    const seen = new Set<string>();
    // Canonical names first, so a variant can never shadow another model's canonical name.
    for (const model of make.models) {
      const alias = aliasKey(model.name);
      if (seen.has(alias)) continue;
      seen.add(alias);
      out.push({ make: make.name, alias, model: model.name });
    }
    for (const model of make.models) {
      for (const variant of model.variants) {
        const alias = aliasKey(variant);
        if (seen.has(alias)) continue;
        seen.add(alias);
        out.push({ make: make.name, alias, model: model.name });
      }
    }
  }
  return out;
}

const makeAliasIndex = new Map<string, MakeAliasEntry>(makeAliasEntries().map((e) => [e.alias, e]));
const modelAliasIndex = new Map<string, Map<string, string>>();
for (const entry of modelAliasEntries()) {
  let byAlias = modelAliasIndex.get(entry.make);
  if (!byAlias) modelAliasIndex.set(entry.make, (byAlias = new Map()));
  byAlias.set(entry.alias, entry.model);
}

/**
 * The catalog's reading of a listing make: `{ make }` for a known spelling, `{ excluded: true }`
 * for a non-vehicle spelling, `null` when unknown.
 */
export function resolveMakeAlias(listingMake: string): { make: string } | { excluded: true } | null {
  const entry = makeAliasIndex.get(aliasKey(listingMake));
  if (!entry) return null;
  return entry.excluded ? { excluded: true } : { make: entry.make };
}

/**
 * The canonical model of a listing model within a canonical make: an exact (case-insensitive)
 * alias, else the longest alias the listing starts with followed by a space (e.g. "911 Carrera 4S
 * Cabriolet" → "911"); null when nothing matches.
 */
export function resolveModelAlias(make: string, listingModel: string): string | null {
  const byAlias = modelAliasIndex.get(make);
  if (!byAlias) return null;
  const key = aliasKey(listingModel);
  const exact = byAlias.get(key);
  if (exact) return exact;
  let best: string | null = null;
  let bestLength = 0;
  for (const [alias, model] of byAlias) {
    if (alias.length > bestLength && key.startsWith(`${alias} `)) {
      best = model;
      bestLength = alias.length;
    }
  }
  return best;
}

/**
 * Median USD (2024 money) of a good example of `model` from model year `year`: interpolated in
 * log space between the model's anchors (clamped at the ends), or the model's flat median.
 */
export function modelMedianUsd(model: CatalogModel, year: number): number {
  const a = model.anchors;
  if (a.length === 0) return model.medianUsd;
  if (year <= a[0][0]) return a[0][1];
  const last = a[a.length - 1];
  if (year >= last[0]) return last[1];
  for (let i = 1; i < a.length; i++) {
    const [y1, p1] = a[i];
    if (year <= y1) {
      const [y0, p0] = a[i - 1];
      const t = (year - y0) / (y1 - y0);
      return Math.round(Math.exp(Math.log(p0) + t * (Math.log(p1) - Math.log(p0))));
    }
  }
  return last[1];
}
