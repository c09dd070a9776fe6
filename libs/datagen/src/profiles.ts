/**
 * How each platform behaves in the synthetic data: volume share, sell-through, reserve share,
 * status vocabulary, end times, which cars it lists, currencies (through seller regions), listing
 * identifiers and links.
 */
import type { SourceId } from '@cars/persistence';
import { mix32 } from './prng';
import type { Region } from './places';

export interface SourceProfile {
  readonly id: SourceId;
  /** Relative share of completed auctions (while the platform exists). */
  readonly share: number;
  /** Sold / (sold + unsold) among auctions that ran to the end. */
  readonly sellThrough: number;
  /** Share of no-reserve listings (always sell when they run to the end). */
  readonly noReserve: number;
  /** Probabilities of the other ending statuses (0 = not in the platform's vocabulary). */
  readonly canceled: number;
  readonly withdrawn: number;
  readonly resultUnavailable: number;
  /** Local end-time window [fromHour, toHour). */
  readonly endHours: readonly [number, number];
  readonly durationDays: readonly [number, number];
  /** Oldest model year the platform lists (null: any). */
  readonly minYear: number | null;
  /** Multiplier on motorcycle models (0: none listed). */
  readonly motorcycles: number;
  /** Multiplier on makes by country of origin. */
  readonly countryBoost: Readonly<Record<string, number>>;
  /** Multiplier on specific makes. */
  readonly makeBoost: Readonly<Record<string, number>>;
  /** Share of listings that spell the make with an alias / an odd case. */
  readonly aliasShare: number;
  readonly caseShare: number;
  /** Share of listings that write the model as a listing variant rather than the canonical name. */
  readonly variantShare: number;
  readonly titleStyle: 'bat' | 'plain' | 'uk';
  /** Where sellers are (region weights); the region decides currency and mileage unit. */
  readonly regions: readonly (readonly [Region, number])[];
  readonly priceFactor: number;
  readonly viewsMedian: number;
  readonly hasLikes: boolean;
  readonly hasComments: boolean;
  /** Share of non-car junk (memorabilia, parts) listings. */
  readonly junk: number;
  readonly auctionId: (counter: number) => string;
  readonly bidId: (counter: number) => string;
  readonly url: (id: string, slug: string) => string;
  readonly image: (id: string, slug: string, endDate: string) => string;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Fixed-width base62 of a uint32 (6 characters cover 2^32). */
function base62(value: number, width: number): string {
  let v = value >>> 0;
  let out = '';
  for (let i = 0; i < width; i++) {
    out = BASE62[v % 62] + out;
    v = Math.floor(v / 62);
  }
  return out;
}

export const PROFILES: Readonly<Record<SourceId, SourceProfile>> = {
  bringatrailer: {
    id: 'bringatrailer',
    share: 40,
    sellThrough: 0.78,
    noReserve: 0.42,
    canceled: 0.003,
    withdrawn: 0.015,
    resultUnavailable: 0,
    endHours: [10, 17],
    durationDays: [7, 7],
    minYear: null,
    motorcycles: 1,
    countryBoost: {},
    makeBoost: {},
    aliasShare: 0.06,
    caseShare: 0.01,
    variantShare: 0.5,
    titleStyle: 'bat',
    regions: [['US', 0.97], ['CA', 0.03]],
    priceFactor: 1,
    viewsMedian: 7000,
    hasLikes: false,
    hasComments: true,
    junk: 0.004,
    auctionId: (c) => String(30000 + c),
    bidId: (c) => String(100000000 + c),
    url: (id, slug) => `https://bringatrailer.com/listing/${slug}-${id}/`,
    image: (id, slug, end) => `https://bringatrailer.com/wp-content/uploads/${end.slice(0, 4)}/${end.slice(5, 7)}/${slug}-${id}-00001.jpg`,
  },
  carsandbids: {
    id: 'carsandbids',
    share: 17,
    sellThrough: 0.84,
    noReserve: 0.55,
    canceled: 0.01,
    withdrawn: 0.005,
    resultUnavailable: 0,
    endHours: [10, 16],
    durationDays: [7, 7],
    minYear: 1981,
    motorcycles: 0,
    countryBoost: { JP: 1.6, DE: 1.2, US: 0.8 },
    makeBoost: {},
    aliasShare: 0.05,
    caseShare: 0.01,
    variantShare: 0.55,
    titleStyle: 'plain',
    regions: [['US', 1]],
    priceFactor: 0.92,
    viewsMedian: 5000,
    hasLikes: true,
    hasComments: true,
    junk: 0.002,
    // 8 characters: two derived from the counter, then a bijective mix of it (unique per counter).
    auctionId: (c) => `${BASE62[(c * 7) % 62]}${BASE62[Math.floor(c / 62) % 62]}${base62(mix32(c ^ 0x5bd1e995), 6)}`,
    bidId: (c) => `b${(c + 1_000_000).toString(36)}`,
    url: (id, slug) => `https://carsandbids.com/auctions/${id}/${slug}`,
    image: (id) => `https://media.carsandbids.com/cdn-cgi/image/width=2080,quality=70/${id}/photos/exterior/main.jpg`,
  },
  pcarmarket: {
    id: 'pcarmarket',
    share: 8,
    sellThrough: 0.7,
    noReserve: 0.3,
    canceled: 0.005,
    withdrawn: 0,
    resultUnavailable: 0.01,
    endHours: [12, 18],
    durationDays: [7, 10],
    minYear: null,
    motorcycles: 0.2,
    countryBoost: {},
    makeBoost: { Porsche: 28 },
    aliasShare: 0.08,
    caseShare: 0.02,
    variantShare: 0.65,
    titleStyle: 'plain',
    regions: [['US', 1]],
    priceFactor: 1,
    viewsMedian: 3500,
    hasLikes: true,
    hasComments: true,
    junk: 0,
    auctionId: (c) => String(10000 + c),
    bidId: (c) => `pm-${c}`,
    url: (id, slug) => `https://www.pcarmarket.com/auction/${slug}-${id}/`,
    image: (id) => `https://d2niwqq19lf86s.cloudfront.net/auction/${id}/gallery/main.jpg`,
  },
  hagerty: {
    id: 'hagerty',
    share: 6,
    sellThrough: 0.62,
    noReserve: 0.2,
    canceled: 0.005,
    withdrawn: 0.01,
    resultUnavailable: 0.04,
    endHours: [12, 21],
    durationDays: [7, 14],
    minYear: null,
    motorcycles: 0.5,
    countryBoost: { US: 1.4 },
    makeBoost: {},
    aliasShare: 0.12,
    caseShare: 0.02,
    variantShare: 0.45,
    titleStyle: 'plain',
    regions: [['US', 0.98], ['CA', 0.02]],
    priceFactor: 1,
    viewsMedian: 2500,
    hasLikes: true,
    hasComments: true,
    junk: 0,
    auctionId: (c) => `HM${100000 + c}`,
    bidId: (c) => `hg-${c}`,
    url: (id, slug) => `https://www.hagerty.com/marketplace/auction/${slug}/${id}`,
    image: (id) => `https://www.hagerty.com/marketplace/media/${id}/hero.jpg`,
  },
  hemmings: {
    id: 'hemmings',
    share: 8,
    sellThrough: 0.66,
    noReserve: 0.15,
    canceled: 0.01,
    withdrawn: 0,
    resultUnavailable: 0.06,
    endHours: [12, 20],
    durationDays: [7, 14],
    minYear: null,
    motorcycles: 0.3,
    countryBoost: { US: 2.5 },
    makeBoost: {},
    aliasShare: 0.15,
    caseShare: 0.03,
    variantShare: 0.4,
    titleStyle: 'plain',
    regions: [['US', 1]],
    priceFactor: 0.95,
    viewsMedian: 2000,
    hasLikes: false,
    hasComments: true,
    junk: 0,
    auctionId: (c) => String(60000 + c),
    bidId: (c) => `hem-${c}`,
    url: (id, slug) => `https://www.hemmings.com/auction/${slug}-${id}`,
    image: (id) => `https://photos.hemmings.com/auction/${id}/1.jpg`,
  },
  collectingcars: {
    id: 'collectingcars',
    share: 12,
    sellThrough: 0.76,
    noReserve: 0.5,
    canceled: 0,
    withdrawn: 0.01,
    resultUnavailable: 0.005,
    endHours: [12, 22],
    durationDays: [7, 7],
    minYear: null,
    motorcycles: 0.6,
    countryBoost: { GB: 2.5, DE: 1.5, IT: 1.8, FR: 1.5, US: 0.5, JP: 1, AU: 4 },
    makeBoost: {},
    aliasShare: 0.1,
    caseShare: 0.02,
    variantShare: 0.55,
    titleStyle: 'uk',
    regions: [['GB', 0.55], ['EU', 0.2], ['US', 0.15], ['AU', 0.1]],
    priceFactor: 1,
    viewsMedian: 4000,
    hasLikes: true,
    hasComments: true,
    junk: 0.002,
    auctionId: (c) => String(200000 + c),
    bidId: (c) => `cc-${c}`,
    url: (id, slug) => `https://collectingcars.com/for-sale/${slug}-${id}`,
    image: (id) => `https://images.collectingcars.com/${id}/main.jpg`,
  },
  carandclassic: {
    id: 'carandclassic',
    share: 9,
    sellThrough: 0.6,
    noReserve: 0.25,
    canceled: 0,
    withdrawn: 0.02,
    resultUnavailable: 0.05,
    endHours: [12, 21],
    durationDays: [7, 14],
    minYear: null,
    motorcycles: 0.5,
    countryBoost: { GB: 3.5, US: 0.4, IT: 1.2, DE: 1.2, FR: 1.4, JP: 0.6 },
    makeBoost: {},
    aliasShare: 0.2,
    caseShare: 0.04,
    variantShare: 0.45,
    titleStyle: 'uk',
    regions: [['GB', 0.85], ['EU', 0.15]],
    priceFactor: 0.82,
    viewsMedian: 1500,
    hasLikes: false,
    hasComments: false,
    junk: 0,
    auctionId: (c) => `C${1200000 + c}`,
    bidId: (c) => `cac-${c}`,
    url: (id, slug) => `https://www.carandclassic.com/auctions/${slug}-${id}`,
    image: (id) => `https://images.carandclassic.com/auctions/${id}/1.jpg`,
  },
};
