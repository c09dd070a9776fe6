/**
 * The seven auction platforms of the data set. Two are followed live.
 *
 * `timezone` is the IANA zone of the wall-clock times the platform publishes (auction end times
 * and bid times arrive without a UTC offset and must be read in this zone). `dateOnly` platforms
 * publish only an end date for completed auctions (`auction_end_at` is null).
 *
 * `unsoldReportsHighBidOnly`: for an unsold car the platform shows only "Bid to $X" (the high bid)
 * rather than an explicit "reserve not met" result. Its observations still carry the source status
 * `reserve not met` with `price_type` `bid`; normalization maps that pair to the REST status
 * `bid to` for these platforms (where the source reports only a high bid) and to `reserve not
 * met` for the others.
 */
export type SourceId =
  | 'bringatrailer'
  | 'carsandbids'
  | 'pcarmarket'
  | 'hagerty'
  | 'hemmings'
  | 'collectingcars'
  | 'carandclassic';

export type CurrencyCode = 'USD' | 'GBP' | 'EUR' | 'AUD';

export interface SourceDefinition {
  readonly id: SourceId;
  readonly name: string;
  /** Followed live (active / coming soon auctions and their bids). */
  readonly live: boolean;
  /** Currencies prices are published in; the first is the main one. */
  readonly currencies: readonly CurrencyCode[];
  /** IANA time zone of the platform's published wall-clock times. */
  readonly timezone: 'America/Los_Angeles' | 'America/New_York' | 'Europe/London';
  /** Base address of the platform; listing links start with it. */
  readonly baseUrl: string;
  /** Completed auctions carry only an end date, no end time. */
  readonly dateOnly: boolean;
  /** See the file comment. */
  readonly unsoldReportsHighBidOnly: boolean;
  /** First month (YYYY-MM) the platform has auctions in the data set. */
  readonly firstMonth: string;
}

export const SOURCES: readonly SourceDefinition[] = [
  {
    id: 'bringatrailer',
    name: 'Bring a Trailer',
    live: true,
    currencies: ['USD'],
    timezone: 'America/Los_Angeles',
    baseUrl: 'https://bringatrailer.com',
    dateOnly: false,
    unsoldReportsHighBidOnly: true,
    firstMonth: '2018-01',
  },
  {
    id: 'carsandbids',
    name: 'Cars & Bids',
    live: true,
    currencies: ['USD'],
    timezone: 'America/Los_Angeles',
    baseUrl: 'https://carsandbids.com',
    dateOnly: false,
    unsoldReportsHighBidOnly: false,
    firstMonth: '2020-07',
  },
  {
    id: 'pcarmarket',
    name: 'PCARMARKET',
    live: false,
    currencies: ['USD'],
    timezone: 'America/Los_Angeles',
    baseUrl: 'https://www.pcarmarket.com',
    dateOnly: false,
    unsoldReportsHighBidOnly: true,
    firstMonth: '2018-01',
  },
  {
    id: 'hagerty',
    name: 'Hagerty Marketplace',
    live: false,
    currencies: ['USD'],
    timezone: 'America/New_York',
    baseUrl: 'https://www.hagerty.com/marketplace',
    dateOnly: false,
    unsoldReportsHighBidOnly: false,
    firstMonth: '2021-01',
  },
  {
    id: 'hemmings',
    name: 'Hemmings Auctions',
    live: false,
    currencies: ['USD'],
    timezone: 'America/New_York',
    baseUrl: 'https://www.hemmings.com/auction',
    dateOnly: true,
    unsoldReportsHighBidOnly: false,
    firstMonth: '2018-01',
  },
  {
    id: 'collectingcars',
    name: 'Collecting Cars',
    live: false,
    currencies: ['GBP', 'EUR', 'USD', 'AUD'],
    timezone: 'Europe/London',
    baseUrl: 'https://collectingcars.com',
    dateOnly: false,
    unsoldReportsHighBidOnly: false,
    firstMonth: '2019-01',
  },
  {
    id: 'carandclassic',
    name: 'Car & Classic',
    live: false,
    currencies: ['GBP', 'EUR'],
    timezone: 'Europe/London',
    baseUrl: 'https://www.carandclassic.com',
    dateOnly: true,
    unsoldReportsHighBidOnly: false,
    firstMonth: '2018-01',
  },
];

export const SOURCE_IDS: readonly SourceId[] = SOURCES.map((s) => s.id);

export const LIVE_SOURCE_IDS: readonly SourceId[] = SOURCES.filter((s) => s.live).map((s) => s.id);

export function isSourceId(value: string): value is SourceId {
  return SOURCE_IDS.includes(value as SourceId);
}

/** The definition of a platform; throws for an unknown identifier. */
export function sourceById(id: string): SourceDefinition {
  const found = SOURCES.find((s) => s.id === id);
  if (!found) throw new Error(`unknown source: ${id}`);
  return found;
}
