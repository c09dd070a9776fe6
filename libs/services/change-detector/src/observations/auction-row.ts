import { AUCTION_STARTING_STATUSES, EventAuction, Observation, ObservationAuction, ObservationBid } from '@cars/contracts';
import { AuctionRecord, BidRecord, isFxCurrency, standardColorName, toUsd } from '@cars/persistence';
import { NormalizedNames } from '../normalization/normalizer';
import type { SourceContext } from '../normalization/source-context';
import { parseDate, parseInstant, parseWallClock } from './wall-clock';

/**
 * The columns of `auctions` an observation writes (snake_case, in this order everywhere: the
 * upsert of the pipeline and the COPY of the bulk loader share it). Columns not listed are
 * kept: id, created_at, updated_at, unique_bidder_count.
 */
export const AUCTION_COLUMNS = [
  'source',
  'source_auction_id',
  'url',
  'title',
  'source_status',
  'auction_status',
  'is_live',
  'price',
  'currency',
  'price_usd',
  'auction_end_date',
  'auction_end_at',
  'auction_end_local',
  'mileage',
  'mileage_unit',
  'vin',
  'title_status',
  'city',
  'state',
  'zip',
  'country_code',
  'seller_username',
  'seller_type',
  'year',
  'has_reserve',
  'listing_make',
  'listing_model',
  'ocd_make_name',
  'ocd_model_name',
  'engine',
  'drivetrain',
  'transmission',
  'body_style',
  'exterior_color',
  'standard_exterior_color',
  'interior_color',
  'standard_interior_color',
  'description',
  'ownership_history',
  'modifications',
  'known_flaws',
  'recent_service_history',
  'listing_details',
  'featured_image_url',
  'views',
  'watches',
  'likes',
  'comments',
  'bid_count',
  'sale_type',
  'price_type',
  'observed_at',
] as const;
export type AuctionColumn = (typeof AUCTION_COLUMNS)[number];

/** PostgreSQL type of each written column (for jsonb_to_recordset and COPY staging). */
export const AUCTION_COLUMN_TYPES: Record<AuctionColumn, string> = {
  source: 'text',
  source_auction_id: 'text',
  url: 'text',
  title: 'text',
  source_status: 'text',
  auction_status: 'text',
  is_live: 'boolean',
  price: 'bigint',
  currency: 'char(3)',
  price_usd: 'bigint',
  auction_end_date: 'date',
  auction_end_at: 'timestamptz',
  auction_end_local: 'timestamp',
  mileage: 'integer',
  mileage_unit: 'text',
  vin: 'text',
  title_status: 'text',
  city: 'text',
  state: 'text',
  zip: 'text',
  country_code: 'text',
  seller_username: 'text',
  seller_type: 'text',
  year: 'smallint',
  has_reserve: 'boolean',
  listing_make: 'text',
  listing_model: 'text',
  ocd_make_name: 'text',
  ocd_model_name: 'text',
  engine: 'text',
  drivetrain: 'text',
  transmission: 'text',
  body_style: 'text',
  exterior_color: 'text',
  standard_exterior_color: 'text',
  interior_color: 'text',
  standard_interior_color: 'text',
  description: 'text',
  ownership_history: 'text',
  modifications: 'text[]',
  known_flaws: 'text[]',
  recent_service_history: 'text[]',
  listing_details: 'text[]',
  featured_image_url: 'text',
  views: 'integer',
  watches: 'integer',
  likes: 'integer',
  comments: 'integer',
  bid_count: 'integer',
  sale_type: 'text',
  price_type: 'text',
  observed_at: 'timestamptz',
};

/** A row as an observation writes it. */
export type AuctionRow = AuctionRecord;

/** The columns of `bids` an observation writes. */
export type BidRow = BidRecord;

/**
 * REST status and liveness from the source status (docs/api/ingestion.md, "The observation").
 * Unknown source statuses are stored as `source_status` and shown as `unknown` (not live).
 */
export function restStatus(
  sourceStatus: string,
  source: Pick<SourceContext, 'unsoldReportsHighBidOnly'>,
): { auction_status: string | null; is_live: boolean } {
  const status = sourceStatus.trim().toLowerCase();
  if ((AUCTION_STARTING_STATUSES as readonly string[]).includes(status)) return { auction_status: null, is_live: true };
  switch (status) {
    case 'sold':
      return { auction_status: 'sold', is_live: false };
    case 'reserve not met':
      return { auction_status: source.unsoldReportsHighBidOnly ? 'bid to' : 'reserve not met', is_live: false };
    case 'result unavailable':
      return { auction_status: 'unknown', is_live: false };
    case 'canceled':
    case 'cancelled':
      return { auction_status: 'canceled', is_live: false };
    case 'withdrawn':
      return { auction_status: 'withdrawn', is_live: false };
    default:
      return { auction_status: 'unknown', is_live: false };
  }
}

const text = (value: string | null | undefined): string | null => (value == null ? null : value);
const whole = (value: number | null | undefined): number | null => (value == null ? null : Math.round(value));
const list = (value: string[] | null | undefined): string[] => (value == null ? [] : value);

/** The stored row of an observation's auction part (throws InvalidTimeError on impossible times). */
export function buildAuctionRow(
  observation: Observation & { auction: ObservationAuction },
  source: SourceContext,
  names: NormalizedNames,
): AuctionRow {
  const a = observation.auction;
  const observedAt = parseInstant(observation.observed_at);
  let endLocal: string | null = null;
  let endAt: string | null = null;
  let endDate: string | null = a.auction_end_date == null ? null : parseDate(a.auction_end_date);
  if (a.auction_end_at != null) {
    const end = parseWallClock(a.auction_end_at, source.timezone);
    endLocal = end.local;
    endAt = end.utc;
    endDate ??= end.local.slice(0, 10);
  }
  const price = whole(a.price);
  const currency = text(a.currency);
  const fxCurrency = currency ?? source.defaultCurrency;
  const priceUsd =
    price != null && fxCurrency != null && isFxCurrency(fxCurrency)
      ? toUsd(price, fxCurrency, endDate ?? observedAt.slice(0, 10))
      : null;
  const status = restStatus(a.status, source);
  return {
    source: observation.source,
    source_auction_id: observation.source_auction_id,
    url: text(a.url),
    title: text(a.title),
    source_status: a.status,
    auction_status: status.auction_status,
    is_live: status.is_live,
    price,
    currency,
    price_usd: priceUsd,
    auction_end_date: endDate,
    auction_end_at: endAt,
    auction_end_local: endLocal,
    mileage: whole(a.mileage),
    mileage_unit: text(a.mileage_unit),
    vin: text(a.vin),
    title_status: text(a.title_status),
    city: text(a.city),
    state: text(a.state),
    zip: text(a.zip),
    country_code: text(a.country_code),
    seller_username: text(a.seller_username),
    seller_type: text(a.seller_type),
    year: whole(a.year),
    has_reserve: a.has_reserve ?? null,
    listing_make: text(a.make),
    listing_model: text(a.model),
    ocd_make_name: names.make,
    ocd_model_name: names.model,
    engine: text(a.engine),
    drivetrain: text(a.drivetrain),
    transmission: text(a.transmission),
    body_style: text(a.body_style),
    exterior_color: text(a.exterior_color),
    standard_exterior_color: standardColorName(a.exterior_color),
    interior_color: text(a.interior_color),
    standard_interior_color: standardColorName(a.interior_color),
    description: text(a.description),
    ownership_history: text(a.ownership_history),
    modifications: list(a.modifications),
    known_flaws: list(a.known_flaws),
    recent_service_history: list(a.recent_service_history),
    listing_details: list(a.listing_details),
    featured_image_url: text(a.featured_image_url),
    views: whole(a.views),
    watches: whole(a.watches),
    likes: whole(a.likes),
    comments: whole(a.comments),
    bid_count: whole(a.bid_count),
    sale_type: text(a.sale_type),
    price_type: text(a.price_type),
    observed_at: observedAt,
  };
}

export function buildBidRow(bid: ObservationBid, source: SourceContext): BidRow {
  const at = bid.bid_at == null ? null : parseWallClock(bid.bid_at, source.timezone);
  return {
    source: source.id,
    source_bid_id: bid.source_bid_id,
    bidder_name: text(bid.bidder_name),
    amount: whole(bid.amount),
    currency: text(bid.currency),
    bid_at: at?.utc ?? null,
    bid_at_local: at?.local ?? null,
  };
}

/** `data.auction` of an auction event, from a stored row. */
export function eventAuction(id: number | string, row: AuctionRow): EventAuction {
  return {
    id: String(id),
    source: row.source,
    url: row.url,
    title: row.title,
    status: row.source_status,
    price: row.price,
    currency: row.currency,
    year: row.year,
    make: row.listing_make,
    model: row.listing_model,
    auction_end_at: row.auction_end_local,
    auction_end_date: row.auction_end_date,
    bid_count: row.bid_count,
    sale_type: row.sale_type,
    price_type: row.price_type,
  };
}
