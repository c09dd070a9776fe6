/**
 * The deterministic synthetic data set: completed auctions from 2018-01-01 to the day before
 * `today` (in end-date order, volume growing over the years), then live auctions of the two live
 * platforms ending within ten days after `today`. Output depends only on the options: the same
 * seed and the same `today` give the same observations, byte for byte.
 *
 * Everything streams: one observation is built at a time; memory stays flat whatever the count.
 */
import { createHash } from 'node:crypto';
import {
  EXCLUDED_MAKE_ALIASES,
  GENERIC_EXTERIOR_COLORS,
  INTERIOR_COLORS,
  MAKE_EXTERIOR_COLORS,
  MAKES,
  SOURCES,
  modelMedianUsd,
  usdRate,
  type CatalogMake,
  type CatalogModel,
  type ColorName,
  type SourceDefinition,
  type SourceId,
} from '@cars/persistence';
import { listingText, listingTitle, type CarFacts, type Condition } from './content';
import type { EndedStatus, Observation, ObservationAuction, ObservationBid } from './observation';
import { dealerName, personName } from './people';
import { PLACES, fillZip, type Place, type Region } from './places';
import { Rng, WeightedTable, hashUnit } from './prng';
import { PROFILES, type SourceProfile } from './profiles';
import { DAY_MS, HOUR_MS, MINUTE_MS, formatDate, formatUtc, formatWallClock, localToUtc, parseDate, utcToLocal } from './time';
import { makeChassisNumber, makeVin } from './vin';

export const DEFAULT_AUCTIONS = 120_000;
export const DEFAULT_LIVE = 1_500;
export const DEFAULT_SEED = '1';
export const FIRST_END_DATE = '2018-01-01';
/** Completed auctions of the live platforms ending this many days before `today` carry bids. */
export const RECENT_BID_DAYS = 90;
/** Live auctions end within this many days after `today`. */
export const LIVE_WINDOW_DAYS = 10;

export interface GenerateOptions {
  /** Completed auctions (default 120,000). */
  auctions?: number;
  /** Live auctions on the live platforms (default 1,500). */
  live?: number;
  /** Any string or number; the same seed gives the same data (default "1"). */
  seed?: string | number;
  /** YYYY-MM-DD; completed auctions end before it, live ones after it (default: the current UTC date). */
  today?: string;
  /**
   * Prefix of every source auction id and bid id (`<namespace>-<id>`), 1–32 letters, digits or
   * `_`. Default: derived from the seed (see idNamespace), so data sets of two different seeds
   * never share an id and one never rewrites the other's auctions.
   */
  namespace?: string;
}

export interface GenerationSummary {
  completed: number;
  live: number;
  bids: number;
  junk: number;
  aliasedMakes: number;
  bySourceStatus: Record<string, Record<string, number>>;
  /** Canonical makes and "make|model" pairs used. */
  makes: Set<string>;
  models: Set<string>;
  /** Completed sold auctions per end month (YYYY-MM). */
  soldByMonth: Record<string, number>;
}

export function newSummary(): GenerationSummary {
  return { completed: 0, live: 0, bids: 0, junk: 0, aliasedMakes: 0, bySourceStatus: {}, makes: new Set(), models: new Set(), soldByMonth: {} };
}

/** "N auctions (X completed, Y live)", the wording both data tools use for what a file holds. */
export function describeCounts(completed: number, live: number): string {
  const n = (v: number) => v.toLocaleString('en-US');
  return `${n(completed + live)} auctions (${n(completed)} completed, ${n(live)} live)`;
}

/** The current UTC date as YYYY-MM-DD (the default `today`). */
export function currentUtcDate(): string {
  return formatDate(Date.now());
}

interface ResolvedOptions {
  auctions: number;
  live: number;
  seed: string;
  today: string;
  /** '' for none (the default seed's data set: the demo data set keeps its ids). */
  namespace: string;
}

const NAMESPACE = /^[A-Za-z0-9_]{1,32}$/;

/**
 * The id namespace a seed gets when none is given: none for the default seed (the demo data set,
 * whose ids stay as they always were); `s<seed>` for a seed of 1–24 letters, digits or `_` (so two
 * such seeds can never share a namespace); otherwise `h` and 16 hex digits of the seed's SHA-256.
 */
export function idNamespace(seed: string | number = DEFAULT_SEED): string {
  const text = String(seed);
  if (text === DEFAULT_SEED) return '';
  if (/^[A-Za-z0-9_]{1,24}$/.test(text)) return `s${text}`;
  return `h${createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16)}`;
}

export function resolveOptions(options: GenerateOptions = {}): ResolvedOptions {
  const auctions = options.auctions ?? DEFAULT_AUCTIONS;
  const live = options.live ?? DEFAULT_LIVE;
  if (!Number.isSafeInteger(auctions) || auctions < 0) throw new Error(`auctions must be a non-negative integer (got ${auctions})`);
  if (!Number.isSafeInteger(live) || live < 0) throw new Error(`live must be a non-negative integer (got ${live})`);
  const today = options.today ?? currentUtcDate();
  const todayMs = parseDate(today);
  if (todayMs < parseDate('2018-03-01')) throw new Error(`today must be 2018-03-01 or later (got ${today})`);
  const seed = String(options.seed ?? DEFAULT_SEED);
  if (options.namespace !== undefined && !NAMESPACE.test(options.namespace)) {
    throw new Error(`namespace must be 1-32 letters, digits or "_" (got "${options.namespace}")`);
  }
  return { auctions, live, seed, today, namespace: options.namespace ?? idNamespace(seed) };
}

// ---------------------------------------------------------------------------------------------
// Static tables (built once per process)

const SEASON = [0.92, 0.97, 1.05, 1.06, 1.06, 1.02, 0.98, 0.98, 1.0, 1.03, 1.0, 0.9];

/** Price level of the collector market by month (2024 = 1), linearly interpolated. */
const MARKET: readonly (readonly [string, number])[] = [
  ['2016-01', 0.8], ['2019-06', 0.8], ['2020-06', 0.82], ['2021-06', 0.97], ['2022-04', 1.1],
  ['2023-01', 1.05], ['2023-12', 1.0], ['2024-12', 0.99], ['2025-12', 1.01], ['2026-12', 1.03],
];

function monthNumber(month: string): number {
  return Number(month.slice(0, 4)) * 12 + Number(month.slice(5, 7)) - 1;
}

function marketIndex(monthNo: number): number {
  const points = MARKET.map(([m, v]) => [monthNumber(m), v] as const);
  if (monthNo <= points[0][0]) return points[0][1];
  for (let i = 1; i < points.length; i++) {
    const [m1, v1] = points[i];
    if (monthNo <= m1) {
      const [m0, v0] = points[i - 1];
      return v0 + ((monthNo - m0) / (m1 - m0)) * (v1 - v0);
    }
  }
  return points[points.length - 1][1];
}

interface MakeChoice {
  make: CatalogMake;
  makeIndex: number;
  models: WeightedTable<CatalogModel>;
}

interface SourceTables {
  def: SourceDefinition;
  profile: SourceProfile;
  index: number;
  makes: WeightedTable<MakeChoice>;
  regions: WeightedTable<readonly [Region, number]>;
  firstMonthNo: number;
}

const PLACE_TABLES: Record<Region, WeightedTable<Place>> = {
  US: new WeightedTable(PLACES.US, (p) => p.weight),
  CA: new WeightedTable(PLACES.CA, (p) => p.weight),
  GB: new WeightedTable(PLACES.GB, (p) => p.weight),
  EU: new WeightedTable(PLACES.EU, (p) => p.weight),
  AU: new WeightedTable(PLACES.AU, (p) => p.weight),
};

function buildSourceTables(): SourceTables[] {
  return SOURCES.map((def, index) => {
    const profile = PROFILES[def.id];
    const choices: MakeChoice[] = MAKES.map((make, makeIndex) => ({
      make,
      makeIndex,
      models: new WeightedTable(make.models, (m) => {
        if (profile.minYear != null && m.lastYear < profile.minYear) return 0;
        return m.weight * (m.kind === 'motorcycle' ? profile.motorcycles : 1);
      }),
    }));
    const makes = new WeightedTable(choices, (c) => {
      if (c.models.size === 0) return 0;
      const share = c.models.total / c.make.models.reduce((s, m) => s + m.weight, 0);
      return c.make.weight * share * (profile.countryBoost[c.make.country] ?? 1) * (profile.makeBoost[c.make.name] ?? 1);
    });
    return {
      def,
      profile,
      index,
      makes,
      regions: new WeightedTable(profile.regions, (r) => r[1]),
      firstMonthNo: monthNumber(def.firstMonth),
    };
  });
}

let sourceTablesCache: SourceTables[] | null = null;
function sourceTables(): SourceTables[] {
  sourceTablesCache ??= buildSourceTables();
  return sourceTablesCache;
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** Words a listing adds to a model name without naming a generation or trim. */
const BODY_WORDS = new Set(['coupe', 'convertible', 'cabriolet', 'cabrio', 'targa', 'roadster', 'fastback', 'pickup', 'truck', 'wagon', 'sedan', 'hatchback', 'van']);

const BODY_BY_WORD: Readonly<Record<string, string>> = {
  coupe: 'Coupe', convertible: 'Convertible', cabriolet: 'Convertible', cabrio: 'Convertible', targa: 'Targa',
  roadster: 'Roadster', fastback: 'Fastback', pickup: 'Pickup', truck: 'Pickup', wagon: 'Wagon', sedan: 'Sedan',
  hatchback: 'Hatchback', van: 'Van',
};

const variantCache = new WeakMap<CatalogModel, readonly string[]>();

function tokens(text: string): string[] {
  return text.toLowerCase().split(/[^a-z0-9]+/).filter((t) => t !== '');
}

/**
 * The listing variants that fit any model year of a model. A model built for up to 12 years keeps
 * all of them; a long-lived one (the Corvette, the 911) keeps only respellings of its name and
 * body-style additions ("Miata", "Vette", "911 Targa"), so a 2020 car is never listed as a 380SL.
 */
function variantsFor(model: CatalogModel): readonly string[] {
  let cached = variantCache.get(model);
  if (!cached) {
    if (model.lastYear - model.firstYear <= 12) cached = model.variants;
    else {
      const own = new Set(tokens(model.name));
      const ownJoined = tokens(model.name).join('');
      cached = model.variants.filter((v) => {
        const rest = tokens(v).filter((t) => !own.has(t) && !BODY_WORDS.has(t));
        return rest.length === 0 || ownJoined.includes(tokens(v).join(''));
      });
    }
    variantCache.set(model, cached);
  }
  return cached;
}

function increment(amount: number): number {
  if (amount < 1000) return 25;
  if (amount < 10000) return 100;
  if (amount < 50000) return 250;
  if (amount < 100000) return 500;
  if (amount < 250000) return 1000;
  if (amount < 1000000) return 2500;
  return 10000;
}

function roundPrice(amount: number): number {
  const inc = increment(amount);
  return Math.max(inc, Math.round(amount / inc) * inc);
}

function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

function currencyFor(region: Region): 'USD' | 'GBP' | 'EUR' | 'AUD' {
  switch (region) {
    case 'US':
    case 'CA':
      return 'USD';
    case 'GB':
      return 'GBP';
    case 'EU':
      return 'EUR';
    case 'AU':
      return 'AUD';
  }
}

function kmShare(region: Region): number {
  switch (region) {
    case 'US':
      return 0;
    case 'CA':
      return 0.6;
    case 'GB':
      return 0.12;
    case 'EU':
    case 'AU':
      return 0.95;
  }
}

function conditionOf(z: number): Condition {
  if (z > 1.5) return 'concours';
  if (z > 0.6) return 'excellent';
  if (z > -0.5) return 'good';
  if (z > -1.4) return 'driver';
  return 'project';
}

function transmissionFor(rng: Rng, make: CatalogMake, model: CatalogModel, year: number): string | null {
  if (model.kind === 'motorcycle') return year < 1975 ? '4-Speed' : year < 1990 ? '5-Speed' : '6-Speed';
  if (model.engine && /electric/i.test(model.engine)) return '1-Speed Direct Drive';
  const sporty = ['Coupe', 'Roadster', 'Targa', 'Spyder', 'Convertible', 'Hatchback', 'Fastback'].includes(model.bodyStyle ?? '');
  const european = ['DE', 'IT', 'GB', 'FR', 'SE', 'JP', 'AT', 'NL', 'CZ', 'ES'].includes(make.country);
  let manualShare = sporty ? (european ? 0.8 : 0.5) : model.bodyStyle === 'Pickup' || model.bodyStyle === 'SUV' ? 0.45 : 0.25;
  if (year >= 2012) manualShare *= 0.45;
  else if (year >= 2000) manualShare *= 0.8;
  if (model.transmission === 'manual') manualShare = 0.9;
  if (model.transmission === 'auto') manualShare = 0.1;
  const manual = model.transmission === 'dct' ? false : rng.chance(manualShare);
  if (manual) {
    if (year < 1950) return '3-Speed Manual';
    if (year < 1975) return rng.chance(0.8) ? '4-Speed Manual' : '5-Speed Manual';
    if (year < 1995) return rng.chance(0.85) ? '5-Speed Manual' : '4-Speed Manual';
    return rng.chance(0.75) ? '6-Speed Manual' : '5-Speed Manual';
  }
  if (year < 1960) return rng.chance(0.5) ? '2-Speed Automatic' : '3-Speed Automatic';
  if (year < 1985) return '3-Speed Automatic';
  if (year < 2000) return make.name === 'Porsche' && year >= 1990 ? 'Tiptronic' : '4-Speed Automatic';
  if (make.name === 'Porsche') return year >= 2009 ? '7-Speed PDK' : '5-Speed Tiptronic S';
  if (make.name === 'Ferrari' || make.name === 'Lamborghini' || make.name === 'McLaren') return year >= 2010 ? '7-Speed Dual-Clutch' : '6-Speed Automated Manual';
  if (make.name === 'BMW' && year >= 2001 && year < 2014 && sporty) return rng.chance(0.6) ? '7-Speed M DCT' : '6-Speed SMG';
  if (year < 2008) return '5-Speed Automatic';
  return rng.chance(0.5) ? '8-Speed Automatic' : rng.chance(0.6) ? '6-Speed Automatic' : '7-Speed Dual-Clutch';
}

function bodyFor(rng: Rng, model: CatalogModel): string | null {
  const body = model.bodyStyle;
  if (body === 'Coupe' && rng.chance(0.12)) return 'Convertible';
  if (body === 'Sedan' && rng.chance(0.05)) return 'Wagon';
  return body;
}

function titleStatusFor(rng: Rng, region: Region, year: number, condition: Condition): string | null {
  if (region !== 'US' && region !== 'CA') return rng.chance(0.3) ? 'clean' : null;
  const r = rng.next();
  if (condition === 'project') {
    if (r < 0.15) return 'bill of sale';
    if (r < 0.22) return 'missing';
    if (r < 0.27) return 'salvage';
    return 'clean';
  }
  if (r < 0.015) return 'salvage';
  if (r < 0.03) return 'rebuilt';
  if (r < 0.035) return 'lien';
  if (year < 1981 && r < 0.06) return 'bill of sale';
  if (year < 1981 && r < 0.08) return 'exempt';
  return 'clean';
}

function mileageFor(rng: Rng, model: CatalogModel, year: number, endYear: number, condition: Condition): number | null {
  const tmu = year < 1970 ? 0.08 : year < 1990 ? 0.03 : 0.003;
  if (rng.chance(tmu)) return null;
  const age = Math.max(0, endYear - year);
  if (age <= 1) return rng.int(5, 3500);
  const annual = model.kind === 'motorcycle' ? 1300 : year >= 2000 ? 6500 : 3800;
  const factor = condition === 'concours' ? 0.6 : condition === 'excellent' ? 0.8 : condition === 'good' ? 1 : 1.3;
  let miles = annual * age * factor * Math.exp(0.8 * rng.normal());
  miles = Math.min(miles, model.kind === 'motorcycle' ? 120000 : 350000);
  if (year < 1981 && miles > 99999 && rng.chance(0.5)) miles %= 100000;
  const value = Math.max(1, Math.round(miles));
  return rng.chance(0.3) && value > 1000 ? Math.round(value / 100) * 100 : value;
}

/** n strictly increasing amounts ending with `final`, all multiples of increment(final); may be shorter. */
function bidLadder(rng: Rng, final: number, wanted: number): number[] {
  const step = increment(final);
  if (wanted <= 1 || final <= step) return [final];
  const start = Math.max(step, Math.floor((final * rng.range(0.08, 0.45)) / step) * step);
  const slots = Math.round((final - start) / step) - 1;
  if (slots < 0) return [final];
  const n = Math.min(wanted, slots + 2);
  if (n <= 1) return [final];
  if (n === 2) return [start, final];
  const inner = n - 2;
  const picks: number[] = [];
  for (let i = 0; i < inner; i++) {
    const u = rng.next();
    picks.push(1 + Math.floor((1 - (1 - u) * (1 - u)) * slots));
  }
  picks.sort((a, b) => a - b);
  for (let i = 0; i < inner; i++) {
    const low = i === 0 ? 1 : picks[i - 1] + 1;
    if (picks[i] < low) picks[i] = low;
  }
  for (let i = inner - 1; i >= 0; i--) {
    const high = slots - (inner - 1 - i);
    if (picks[i] > high) picks[i] = high;
  }
  return [start, ...picks.map((k) => start + k * step), final];
}

/** `count` strictly increasing instants (whole seconds) in [from, lastAt], the last one at lastAt. */
function bidTimes(rng: Rng, from: number, lastAt: number, count: number): number[] {
  const times: number[] = [];
  const span = lastAt - from;
  for (let i = 0; i < count - 1; i++) {
    const u = rng.next();
    const f = rng.chance(0.7) ? Math.pow(u, 0.4) : u;
    times.push(from + Math.floor((f * span) / 1000) * 1000);
  }
  times.sort((a, b) => a - b);
  times.push(lastAt);
  for (let i = count - 2; i >= 0; i--) if (times[i] >= times[i + 1]) times[i] = times[i + 1] - 1000;
  return times;
}

// ---------------------------------------------------------------------------------------------
// The generator

interface Seller {
  index: number;
  username: string;
  type: 'private' | 'dealer';
  region: Region;
  place: Place;
  zip: string;
}

interface Car {
  source: number;
  make: CatalogMake;
  model: CatalogModel;
  year: number;
  vin: string | null;
  exterior: ColorName | null;
  interior: ColorName | null;
  /** Odometer in miles: undefined until first listed, null when unknown (TMU). */
  mileageMiles: number | null | undefined;
  transmission: string | null;
  body: string | null;
  listingMake: string;
  listingModel: string;
  sellerIndex: number;
  priceZ: number;
}

const RELIST_CAPACITY = 4096;
const RELIST_SHARE = 0.04;

const JUNK_ITEMS: Readonly<Record<string, readonly string[]>> = {
  Memorabilia: ['Porsche Factory Tool Kit', 'Ferrari Dealership Sign', 'Gulf Racing Helmet', 'Le Mans Poster Collection', 'Shelby Signed Steering Wheel'],
  Parts: ['Porsche 911 Engine Case', 'Set of Four Fuchs Wheels', 'Weber 40 DCOE Carburetors', 'Jaguar XK Cylinder Head', 'Chevrolet 427 Short Block'],
  Automobilia: ['Vintage Gas Pump', 'Porcelain Oil Sign', 'Shop Air Meter', 'Enamel Club Badge Collection'],
  Wheels: ['BBS RS 17-Inch Wheels', 'Campagnolo Magnesium Wheels', 'Minilite 15-Inch Wheels'],
  Signage: ['Neon Dealer Sign', 'Double-Sided Porcelain Sign'],
  Literature: ['Factory Brochure Collection', 'Original Shop Manuals'],
  'Go-Kart': ['Margay Racing Kart', 'Bug Kart'],
  'Pedal Car': ['Murray Pedal Car', 'Austin J40 Pedal Car'],
  Tools: ['Snap-on Tool Chest', 'Factory Special Tool Set'],
  'Neon Sign': ['Chevrolet Service Neon Sign'],
  Toy: ['Tin Toy Race Car Collection', 'CMC 1:18 Model Collection'],
  'Golf Cart': ['Club Car Golf Cart'],
  Trailer: ['Featherlite Enclosed Car Trailer', 'Open Car Hauler Trailer'],
  Boat: ['Riva Aquarama Runabout', 'Chris-Craft Runabout'],
};

class DataSetGenerator {
  private readonly rng: Rng;
  private readonly tables = sourceTables();
  private readonly nowMs: number;
  private readonly todayMs: number;
  private readonly startMs = parseDate(FIRST_END_DATE);
  private readonly auctionCounters: number[];
  private readonly bidCounters: number[];
  private readonly sellerPools: number[];
  private readonly bidderPools: number[];
  private readonly relist: (Car | undefined)[] = new Array<Car | undefined>(RELIST_CAPACITY);
  private relistCount = 0;
  private readonly dayTable: WeightedTable<number>;
  private readonly monthSources = new Map<number, WeightedTable<SourceTables>>();

  constructor(
    private readonly options: ResolvedOptions,
    private readonly summary: GenerationSummary | undefined,
  ) {
    this.rng = new Rng(`cars-datagen:${options.seed}`);
    this.todayMs = parseDate(options.today);
    this.nowMs = this.todayMs + 12 * HOUR_MS;
    const lastDay = this.todayMs - DAY_MS;
    const days = Math.round((lastDay - this.startMs) / DAY_MS) + 1;
    const dayIndexes = Array.from({ length: days }, (_, i) => i);
    this.dayTable = new WeightedTable(dayIndexes, (d) => {
      const date = new Date(this.startMs + d * DAY_MS);
      const monthNo = date.getUTCFullYear() * 12 + date.getUTCMonth();
      const growth = 1 + 3.2 * Math.pow(d / Math.max(1, days - 1), 1.15);
      return growth * SEASON[date.getUTCMonth()] * this.sourcesOf(monthNo).total;
    });
    const totalShare = this.tables.reduce((s, t) => s + t.profile.share, 0);
    this.auctionCounters = this.tables.map(() => 0);
    this.bidCounters = this.tables.map(() => 0);
    this.sellerPools = this.tables.map((t) => Math.max(40, Math.round(((options.auctions + options.live) * t.profile.share * 0.4) / totalShare)));
    this.bidderPools = this.tables.map((t) => Math.max(200, Math.round(((options.auctions + options.live) * t.profile.share * 0.5) / totalShare)));
  }

  private sourcesOf(monthNo: number): WeightedTable<SourceTables> {
    let table = this.monthSources.get(monthNo);
    if (!table) {
      table = new WeightedTable(this.tables, (t) => (monthNo >= t.firstMonthNo ? t.profile.share : 0));
      this.monthSources.set(monthNo, table);
    }
    return table;
  }

  *run(): Generator<Observation> {
    const { auctions, live } = this.options;
    for (let i = 0; i < auctions; i++) {
      const day = this.dayTable.at((i + this.rng.next()) / auctions);
      yield this.completed(this.startMs + day * DAY_MS);
    }
    const liveTables = this.tables.filter((t) => t.def.live);
    const liveSources = new WeightedTable(liveTables, (t) => t.profile.share);
    for (let i = 0; i < live; i++) {
      const u = (i + this.rng.next()) / live;
      yield this.liveAuction(liveSources.pick(this.rng), u);
    }
  }

  // --- people ---------------------------------------------------------------------------------

  private seller(t: SourceTables, index: number): Seller {
    const pool = this.sellerPools[t.index];
    const s = t.index;
    const dealer = index < pool * 0.005 || hashUnit(s, index, 11) < (index < pool * 0.04 ? 0.9 : 0.03);
    const region = t.regions.at(hashUnit(s, index, 12))[0];
    const place = PLACE_TABLES[region].at(hashUnit(s, index, 13));
    const zipSeed = s * 1_000_003 + index;
    return {
      index,
      username: dealer ? dealerName(index + 17 * s) : personName(index, hashUnit(s, index, 14)),
      type: dealer ? 'dealer' : 'private',
      region,
      place,
      zip: fillZip(place.zip, (k) => hashUnit(zipSeed, 15, k)),
    };
  }

  private pickSellerIndex(t: SourceTables): number {
    const pool = this.sellerPools[t.index];
    return Math.min(pool - 1, Math.floor(pool * Math.pow(this.rng.next(), 1.6)));
  }

  private bidderName(t: SourceTables, index: number): string {
    return personName(index + 7919, hashUnit(t.index, index, 21));
  }

  // --- cars -----------------------------------------------------------------------------------

  private newCar(t: SourceTables, endYear: number, endMonth: number, sellerIndex: number): Car {
    const rng = this.rng;
    const maxYear = Math.min(endYear + (endMonth >= 7 ? 1 : 0), new Date(this.nowMs).getUTCFullYear() + 1);
    let make: CatalogMake | null = null;
    let model: CatalogModel | null = null;
    for (let attempt = 0; attempt < 200 && !model; attempt++) {
      const choice = t.makes.pick(rng);
      const candidate = choice.models.pick(rng);
      const minYear = Math.max(candidate.firstYear, t.profile.minYear ?? 0);
      if (minYear <= Math.min(candidate.lastYear, maxYear)) {
        make = choice.make;
        model = candidate;
      }
    }
    if (!make || !model) throw new Error('no catalog model fits the auction date');
    const minYear = Math.max(model.firstYear, t.profile.minYear ?? 0);
    const year = rng.int(minYear, Math.min(model.lastYear, maxYear));

    const palette = MAKE_EXTERIOR_COLORS[make.name];
    const exterior = palette && rng.chance(0.7) ? rng.pick(palette) : rng.pick(GENERIC_EXTERIOR_COLORS);
    const interior = model.kind === 'motorcycle' ? null : rng.pick(INTERIOR_COLORS);
    const vin = rng.chance(0.02) ? null : year >= 1981 ? makeVin(rng, make.wmi, make.country, year) : makeChassisNumber(rng, make.name, make.country, year);

    // Listing spellings.
    let listingMake = make.name;
    const r = rng.next();
    if (r < t.profile.aliasShare && make.aliases.length > 0) listingMake = rng.pick(make.aliases);
    else if (r < t.profile.aliasShare + t.profile.caseShare) listingMake = rng.chance(0.6) ? make.name.toUpperCase() : make.name.toLowerCase();
    const variants = variantsFor(model);
    const variantChance = variants.length === 0 ? 0 : t.profile.variantShare * Math.sqrt(variants.length / Math.max(3, model.variants.length));
    const listingModel = rng.chance(variantChance) ? rng.pick(variants) : model.name;
    let body = model.kind === 'motorcycle' ? 'Motorcycle' : bodyFor(rng, model);
    for (const word of tokens(listingModel)) {
      const named = BODY_BY_WORD[word];
      if (named && model.kind === 'car') body = named;
    }

    return {
      source: t.index,
      make,
      model,
      year,
      vin,
      exterior,
      interior,
      mileageMiles: undefined,
      transmission: transmissionFor(rng, make, model, year),
      body,
      listingMake,
      listingModel,
      sellerIndex,
      priceZ: rng.normal(),
    };
  }

  private takeRelist(t: SourceTables, endYear: number): Car | null {
    if (this.relistCount < 200 || !this.rng.chance(RELIST_SHARE)) return null;
    const slot = this.rng.int(0, Math.min(this.relistCount, RELIST_CAPACITY) - 1);
    const car = this.relist[slot];
    if (!car || car.source !== t.index || car.year > endYear + 1) return null;
    this.relist[slot] = undefined;
    // The car comes back a little later, a few hundred miles older, its price nudged.
    return { ...car, mileageMiles: car.mileageMiles == null ? car.mileageMiles : car.mileageMiles + this.rng.int(0, 900), priceZ: car.priceZ + 0.15 * this.rng.normal() };
  }

  private remember(car: Car): void {
    this.relist[this.relistCount % RELIST_CAPACITY] = car;
    this.relistCount++;
  }

  // --- auctions -------------------------------------------------------------------------------

  private completed(dayMs: number): Observation {
    const rng = this.rng;
    const date = new Date(dayMs);
    const monthNo = date.getUTCFullYear() * 12 + date.getUTCMonth();
    const t = this.sourcesOf(monthNo).pick(rng);
    const p = t.profile;
    const zone = t.def.timezone;

    // End time: a wall-clock time in the platform's window on that local day.
    const endMinute = rng.int(p.endHours[0] * 60, p.endHours[1] * 60 - 1);
    const endLocal = dayMs + endMinute * MINUTE_MS;
    const endUtc = localToUtc(zone, endLocal);
    const duration = rng.int(p.durationDays[0], p.durationDays[1]) * DAY_MS;
    const startUtc = endUtc - duration;
    const observed = Math.min(this.nowMs - MINUTE_MS, endUtc + 30_000 + Math.round(rng.exponential(4 * HOUR_MS) / 1000) * 1000);

    const hasReserve = !rng.chance(p.noReserve);
    const r = rng.next();
    let status: EndedStatus;
    if (r < p.canceled) status = 'canceled';
    else if (r < p.canceled + p.withdrawn) status = 'withdrawn';
    else if (r < p.canceled + p.withdrawn + p.resultUnavailable) status = 'result unavailable';
    else if (!hasReserve) status = 'sold';
    else status = rng.chance((p.sellThrough - p.noReserve) / (1 - p.noReserve)) ? 'sold' : 'reserve not met';

    if (p.junk > 0 && rng.chance(p.junk)) return this.junk(t, endLocal, observed, status);

    const carriesBids = t.def.live && dayMs >= this.todayMs - RECENT_BID_DAYS * DAY_MS && status !== 'canceled' && status !== 'result unavailable';
    const auction = this.auction(t, {
      endLocal,
      endUtc,
      startUtc,
      observed,
      status,
      hasReserve,
      dateOnly: t.def.dateOnly,
      carriesBids,
      live: false,
    });
    if (this.summary) {
      this.summary.completed++;
      if (status === 'sold') {
        const month = formatDate(dayMs).slice(0, 7);
        this.summary.soldByMonth[month] = (this.summary.soldByMonth[month] ?? 0) + 1;
      }
    }
    return auction;
  }

  private liveAuction(t: SourceTables, u: number): Observation {
    const rng = this.rng;
    const p = t.profile;
    const zone = t.def.timezone;
    const observed = this.nowMs - rng.int(0, 15 * 60) * 1000;
    const todayLocal = Math.floor(utcToLocal(zone, this.nowMs) / DAY_MS) * DAY_MS;
    const dayOffset = Math.min(LIVE_WINDOW_DAYS - 1, Math.floor(u * LIVE_WINDOW_DAYS));
    let endLocal = todayLocal + dayOffset * DAY_MS + rng.int(p.endHours[0] * 60, p.endHours[1] * 60 - 1) * MINUTE_MS;
    let endUtc = localToUtc(zone, endLocal);
    if (endUtc <= this.nowMs + 10 * MINUTE_MS) {
      endLocal += DAY_MS;
      endUtc = localToUtc(zone, endLocal);
    }
    const duration = rng.int(p.durationDays[0], p.durationDays[1]) * DAY_MS;
    const startUtc = endUtc - duration;
    const status = startUtc > observed ? 'coming soon' : 'active';
    const hasReserve = !rng.chance(p.noReserve);
    const obs = this.auction(t, { endLocal, endUtc, startUtc, observed, status, hasReserve, dateOnly: false, carriesBids: status === 'active', live: true });
    if (this.summary) this.summary.live++;
    return obs;
  }

  private auction(
    t: SourceTables,
    a: {
      endLocal: number;
      endUtc: number;
      startUtc: number;
      observed: number;
      status: string;
      hasReserve: boolean;
      dateOnly: boolean;
      carriesBids: boolean;
      live: boolean;
    },
  ): Observation {
    const rng = this.rng;
    const p = t.profile;
    const endDate = new Date(a.endLocal);
    const endYear = endDate.getUTCFullYear();
    const endMonth = endDate.getUTCMonth() + 1;
    const monthLabel = formatDate(a.endLocal).slice(0, 7);

    let car = this.takeRelist(t, endYear);
    if (!car) car = this.newCar(t, endYear, endMonth, this.pickSellerIndex(t));
    const seller = this.seller(t, car.sellerIndex);
    const { make, model, year } = car;

    // Price (USD, then local currency).
    const z = car.priceZ;
    const condition = conditionOf(z);
    const median = modelMedianUsd(model, year) * marketIndex(endYear * 12 + endMonth - 1) * p.priceFactor;
    const floor = model.kind === 'motorcycle' ? 800 : 1500;
    const hammerUsd = Math.max(floor, median * Math.exp(model.sigma * z));
    const currency = currencyFor(seller.region);
    const rate = usdRate(currency, monthLabel);
    const hammer = roundPrice(hammerUsd / rate);

    // Mileage.
    if (car.mileageMiles === undefined) car.mileageMiles = mileageFor(rng, model, year, endYear, condition);
    const km = rng.chance(kmShare(seller.region));
    const mileage = car.mileageMiles == null ? null : km ? Math.round(car.mileageMiles * 1.609344) : car.mileageMiles;
    const mileageUnit: 'mi' | 'km' = km ? 'km' : 'mi';

    // Result.
    let price: number | null = null;
    let priceType: string | null = null;
    let finalBid: number | null = null;
    const popularity = Math.exp(0.45 * rng.normal()) * (a.hasReserve ? 1 : 1.3);
    let bidCount = Math.max(1, Math.round(popularity * (6 + 7 * Math.log10(Math.max(1, hammerUsd / 1000)))));
    switch (a.status) {
      case 'sold':
        price = hammer;
        priceType = 'sold';
        finalBid = hammer;
        break;
      case 'reserve not met':
        price = roundPrice(hammer * rng.range(0.6, 0.93));
        priceType = 'bid';
        finalBid = price;
        bidCount = Math.max(1, Math.round(bidCount * 0.65));
        break;
      case 'result unavailable':
        bidCount = Math.round(bidCount * 0.5);
        break;
      case 'canceled':
        bidCount = 0;
        break;
      case 'withdrawn':
        bidCount = rng.int(0, 8);
        finalBid = bidCount > 0 ? roundPrice(hammer * rng.range(0.25, 0.7)) : null;
        break;
      case 'active': {
        const progress = Math.min(1, Math.max(0, (a.observed - a.startUtc) / (a.endUtc - a.startUtc)));
        bidCount = Math.round(bidCount * (0.1 + 0.9 * Math.pow(progress, 1.5)));
        if (progress < 0.15 && rng.chance(0.4)) bidCount = 0;
        if (bidCount > 0) {
          price = roundPrice(hammer * (0.2 + 0.55 * Math.pow(progress, 1.3)) * rng.range(0.9, 1.05));
          priceType = 'bid';
          finalBid = price;
        }
        break;
      }
      default:
        bidCount = 0;
        break;
    }

    // Bids.
    const bids: ObservationBid[] = [];
    if (a.carriesBids && finalBid != null && bidCount > 0) {
      const amounts = bidLadder(rng, finalBid, bidCount);
      let lastAt: number;
      if (a.status === 'sold' || a.status === 'reserve not met') lastAt = a.endUtc - rng.int(3, 120) * 1000;
      else if (a.status === 'withdrawn') lastAt = a.startUtc + Math.floor((a.endUtc - a.startUtc) * rng.range(0.2, 0.85));
      else lastAt = Math.min(a.observed - 1000, Math.max(a.startUtc + amounts.length * 1000 + 60_000, a.observed - Math.round(rng.exponential(2 * HOUR_MS))));
      lastAt = Math.floor(lastAt / 1000) * 1000;
      if (lastAt - a.startUtc < (amounts.length + 1) * 1000) {
        // Too little time since the start for this ladder: no bids yet.
        amounts.length = 0;
        if (a.live) {
          price = null;
          priceType = null;
        }
      }
      const firstAt = a.startUtc + rng.int(60, 3600) * 1000;
      const times = amounts.length > 0 ? bidTimes(rng, Math.min(firstAt, lastAt - amounts.length * 1000), lastAt, amounts.length) : [];
      const distinct = Math.max(Math.min(2, amounts.length), Math.min(amounts.length, Math.round(amounts.length * rng.range(0.3, 0.65))));
      const bidders: number[] = [];
      const pool = this.bidderPools[t.index];
      while (bidders.length < distinct) {
        const b = Math.min(pool - 1, Math.floor(pool * Math.pow(rng.next(), 1.6)));
        if (!bidders.includes(b)) bidders.push(b);
      }
      const assigned: number[] = new Array<number>(amounts.length);
      for (let i = amounts.length - 1; i >= 0; i--) {
        let who = bidders[i === amounts.length - 1 ? 0 : rng.int(0, bidders.length - 1)];
        if (i < amounts.length - 1 && who === assigned[i + 1] && bidders.length > 1) who = bidders[(bidders.indexOf(who) + 1) % bidders.length];
        assigned[i] = who;
      }
      for (let i = 0; i < amounts.length; i++) {
        bids.push({
          source_bid_id: this.scoped(p.bidId(this.bidCounters[t.index]++)),
          bidder_name: this.bidderName(t, assigned[i]),
          amount: amounts[i],
          currency,
          bid_at: formatWallClock(utcToLocal(t.def.timezone, times[i])),
        });
      }
      bidCount = bids.length;
      if (this.summary) this.summary.bids += bids.length;
    }

    // Text.
    const titleStatus = titleStatusFor(rng, seller.region, year, condition);
    const facts: CarFacts = {
      year,
      make: make.name,
      model: model.name,
      listingMake: car.listingMake,
      listingModel: car.listingModel,
      kind: model.kind,
      bodyStyle: car.body,
      engine: model.engine,
      transmission: car.transmission,
      drivetrain: model.kind === 'motorcycle' ? null : model.drivetrain,
      exteriorColor: car.exterior?.name ?? null,
      interiorColor: car.interior?.name ?? null,
      mileage,
      mileageUnit,
      vin: car.vin,
      condition,
      country: seller.place.country,
      state: seller.place.state,
      titleStatus,
      hasReserve: a.hasReserve,
      endYear,
      endMonth,
      sellerType: seller.type,
    };
    const text = listingText(rng, facts);
    const title = listingTitle(rng, p.titleStyle, { ...facts, endYear });

    const id = this.scoped(p.auctionId(this.auctionCounters[t.index]++));
    const slug = slugify(`${year} ${car.listingMake} ${car.listingModel}`);
    const endDateLabel = formatDate(a.endLocal);

    const views = Math.round(p.viewsMedian * Math.exp(0.6 * rng.normal()) * Math.pow(Math.max(hammerUsd, 2000) / 30000, 0.25) * (a.live ? Math.min(1, Math.max(0.05, (a.observed - a.startUtc) / (a.endUtc - a.startUtc))) : 1));
    const watches = Math.round(views * rng.range(0.01, 0.05));

    const auction: ObservationAuction = {
      url: p.url(id, slug),
      title,
      status: a.status,
      price,
      currency,
      year,
      make: car.listingMake,
      model: car.listingModel,
      auction_end_at: a.dateOnly ? null : formatWallClock(a.endLocal),
      auction_end_date: a.live ? null : endDateLabel,
      bid_count: bidCount,
      sale_type: 'auction',
      price_type: priceType,
      mileage,
      mileage_unit: mileage == null ? null : mileageUnit,
      vin: car.vin,
      title_status: titleStatus,
      city: seller.place.city,
      state: seller.place.state,
      zip: seller.zip,
      country_code: seller.place.country,
      seller_username: seller.username,
      seller_type: seller.type,
      has_reserve: a.hasReserve,
      engine: model.engine,
      drivetrain: model.kind === 'motorcycle' ? null : model.drivetrain,
      transmission: car.transmission,
      body_style: car.body,
      exterior_color: car.exterior?.name ?? null,
      interior_color: car.interior?.name ?? null,
      description: text.description,
      ownership_history: text.ownershipHistory,
      modifications: text.modifications,
      known_flaws: text.knownFlaws,
      recent_service_history: text.recentServiceHistory,
      listing_details: text.listingDetails,
      featured_image_url: rng.chance(0.02) ? null : p.image(id, slug, endDateLabel),
      views,
      watches,
      likes: p.hasLikes ? Math.round(watches * rng.range(0.1, 0.6)) : null,
      comments: p.hasComments ? Math.round(bidCount * rng.range(0.3, 1.8) + rng.exponential(8)) : null,
    };

    this.remember(car);
    this.count(t, a.status, car);
    return { source: t.def.id, source_auction_id: id, observed_at: formatUtc(a.observed), auction, bids };
  }

  private junk(t: SourceTables, endLocal: number, observed: number, status: EndedStatus): Observation {
    const rng = this.rng;
    const p = t.profile;
    const category = rng.pick(EXCLUDED_MAKE_ALIASES.filter((c) => JUNK_ITEMS[c] !== undefined));
    const item = rng.pick(JUNK_ITEMS[category]);
    const seller = this.seller(t, this.pickSellerIndex(t));
    const currency = currencyFor(seller.region);
    const amount = roundPrice(Math.max(100, 1500 * Math.exp(rng.normal())) / usdRate(currency, formatDate(endLocal).slice(0, 7)));
    const finalStatus: EndedStatus = status === 'reserve not met' ? 'sold' : status;
    const year = ['Go-Kart', 'Golf Cart', 'Trailer', 'Boat'].includes(category) ? rng.int(1960, 2020) : null;
    const id = this.scoped(p.auctionId(this.auctionCounters[t.index]++));
    const slug = slugify(item);
    const endDateLabel = formatDate(endLocal);
    const auction: ObservationAuction = {
      url: p.url(id, slug),
      title: `${!rng.chance(0.2) && p.titleStyle === 'bat' ? 'No Reserve: ' : ''}${year != null ? `${year} ` : ''}${item}`,
      status: finalStatus,
      price: finalStatus === 'sold' ? amount : null,
      currency,
      year,
      make: category,
      model: item,
      auction_end_at: t.def.dateOnly ? null : formatWallClock(endLocal),
      auction_end_date: endDateLabel,
      bid_count: finalStatus === 'sold' ? rng.int(1, 40) : 0,
      sale_type: 'auction',
      price_type: finalStatus === 'sold' ? 'sold' : null,
      mileage: null,
      mileage_unit: null,
      vin: null,
      title_status: null,
      city: seller.place.city,
      state: seller.place.state,
      zip: seller.zip,
      country_code: seller.place.country,
      seller_username: seller.username,
      seller_type: seller.type,
      has_reserve: false,
      engine: null,
      drivetrain: null,
      transmission: null,
      body_style: null,
      exterior_color: null,
      interior_color: null,
      description: `This ${item} is offered with no reserve. It is not a vehicle; it is listed in the ${category.toLowerCase()} category.`,
      ownership_history: null,
      modifications: [],
      known_flaws: [],
      recent_service_history: [],
      listing_details: [item],
      featured_image_url: p.image(id, slug, endDateLabel),
      views: Math.round(p.viewsMedian * 0.3 * Math.exp(0.5 * rng.normal())),
      watches: rng.int(0, 60),
      likes: p.hasLikes ? rng.int(0, 20) : null,
      comments: p.hasComments ? rng.int(0, 15) : null,
    };
    if (this.summary) {
      this.summary.junk++;
      this.summary.completed++;
    }
    this.tally(t.def.id, finalStatus);
    return { source: t.def.id, source_auction_id: id, observed_at: formatUtc(observed), auction, bids: [] };
  }

  private count(t: SourceTables, status: string, car: Car): void {
    this.tally(t.def.id, status);
    if (!this.summary) return;
    this.summary.makes.add(car.make.name);
    this.summary.models.add(`${car.make.name}|${car.model.name}`);
    if (car.listingMake !== car.make.name) this.summary.aliasedMakes++;
  }

  /** A source's own id within this data set's namespace. */
  private scoped(id: string): string {
    return this.options.namespace === '' ? id : `${this.options.namespace}-${id}`;
  }

  private tally(source: SourceId, status: string): void {
    if (!this.summary) return;
    const bySource = (this.summary.bySourceStatus[source] ??= {});
    bySource[status] = (bySource[status] ?? 0) + 1;
  }
}

/**
 * The observations of the synthetic data set, one at a time (completed auctions in end-date order,
 * then live auctions). Pass a summary (see newSummary) to collect counts while iterating.
 */
export function* generateObservations(options: GenerateOptions = {}, summary?: GenerationSummary): Generator<Observation> {
  yield* new DataSetGenerator(resolveOptions(options), summary).run();
}

/** Total observations `generateObservations(options)` yields. */
export function observationCount(options: GenerateOptions = {}): number {
  const resolved = resolveOptions(options);
  return resolved.auctions + resolved.live;
}
