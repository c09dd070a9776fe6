import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';

/**
 * The observation (DESIGN.md §7): what a scraper, the import CLI or the simulator sends to the
 * `observations` queue, one JSON object per message (NDJSON in files). Field names follow the
 * event payload of SPEC.md where they overlap. `Observation` is the plain shape; `ObservationDto`
 * validates it on consume (`validatePlain(ObservationDto, json)`): unknown members are errors.
 *
 * Times: `observed_at` is an ISO 8601 instant (with `Z` or an offset). `auction_end_at` and
 * `bid_at` are the source's wall-clock times without an offset (read in the source's time zone);
 * an offset, when a source sends one, is honoured. `auction_end_date` is a date (YYYY-MM-DD) for
 * date-only sources. Prices and amounts are in whole units of `currency` (fractions are rounded).
 */
export interface ObservationAuction {
  url?: string | null;
  title?: string | null;
  /** Source status: active, coming soon, sold, reserve not met, result unavailable, canceled, withdrawn, or another value (stored and passed through). */
  status: string;
  price?: number | null;
  currency?: string | null;
  year?: number | null;
  make?: string | null;
  model?: string | null;
  auction_end_at?: string | null;
  auction_end_date?: string | null;
  bid_count?: number | null;
  sale_type?: string | null;
  price_type?: string | null;
  mileage?: number | null;
  mileage_unit?: 'mi' | 'km' | null;
  vin?: string | null;
  title_status?: string | null;
  city?: string | null;
  state?: string | null;
  zip?: string | null;
  country_code?: string | null;
  seller_username?: string | null;
  seller_type?: string | null;
  has_reserve?: boolean | null;
  engine?: string | null;
  drivetrain?: string | null;
  transmission?: string | null;
  body_style?: string | null;
  exterior_color?: string | null;
  interior_color?: string | null;
  description?: string | null;
  ownership_history?: string | null;
  modifications?: string[] | null;
  known_flaws?: string[] | null;
  recent_service_history?: string[] | null;
  listing_details?: string[] | null;
  featured_image_url?: string | null;
  views?: number | null;
  watches?: number | null;
  likes?: number | null;
  comments?: number | null;
}

export interface ObservationBid {
  /** The source's identity of the bid: a bid fires `bid.created` once per (source, source_bid_id), ever. */
  source_bid_id: string;
  bidder_name?: string | null;
  amount?: number | null;
  currency?: string | null;
  bid_at?: string | null;
}

export interface Observation {
  /** Platform identifier (lowercase), e.g. `bringatrailer`. */
  source: string;
  source_auction_id: string;
  /** When the scraper saw it (ISO 8601 instant). */
  observed_at: string;
  /** Omitted for a bids-only observation (it stays pending until its parent auction exists). */
  auction?: ObservationAuction | null;
  bids?: ObservationBid[] | null;
}

/** ISO 8601 instant: date, time, and `Z` or an offset. */
export const INSTANT_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
/** Source wall-clock time (offset tolerated, then honoured). */
export const WALL_CLOCK_PATTERN = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/;
export const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
export const CURRENCY_PATTERN = /^[A-Z]{3}$/;
export const SOURCE_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

const INT32_MAX = 2147483647;
/** Prices up to a trillion units: far beyond any car, well inside bigint and 2^53. */
const PRICE_MAX = 1e12;
const TEXT_MAX = 2000;
const LONG_TEXT_MAX = 200000;
const LIST_MAX = 500;

export class ObservationBidDto implements ObservationBid {
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  source_bid_id: string;

  @IsOptional() @IsString() @MaxLength(TEXT_MAX) bidder_name?: string | null;

  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(PRICE_MAX)
  amount?: number | null;

  @IsOptional() @IsString() @Matches(CURRENCY_PATTERN, { message: 'currency must be an ISO 4217 code (e.g. USD)' }) currency?: string | null;

  @IsOptional()
  @IsString()
  @Matches(WALL_CLOCK_PATTERN, { message: 'bid_at must be a date-time (YYYY-MM-DDTHH:MM:SS)' })
  bid_at?: string | null;
}

export class ObservationAuctionDto implements ObservationAuction {
  @IsOptional() @IsString() @MaxLength(TEXT_MAX) url?: string | null;
  @IsOptional() @IsString() @MaxLength(TEXT_MAX) title?: string | null;

  @IsString()
  @MinLength(1)
  @MaxLength(64)
  status: string;

  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(PRICE_MAX)
  price?: number | null;

  @IsOptional() @IsString() @Matches(CURRENCY_PATTERN, { message: 'currency must be an ISO 4217 code (e.g. USD)' }) currency?: string | null;
  @IsOptional() @IsInt() @Min(1800) @Max(2200) year?: number | null;
  @IsOptional() @IsString() @MaxLength(TEXT_MAX) make?: string | null;
  @IsOptional() @IsString() @MaxLength(TEXT_MAX) model?: string | null;

  @IsOptional()
  @IsString()
  @Matches(WALL_CLOCK_PATTERN, { message: 'auction_end_at must be a date-time (YYYY-MM-DDTHH:MM:SS)' })
  auction_end_at?: string | null;

  @IsOptional()
  @IsString()
  @Matches(DATE_PATTERN, { message: 'auction_end_date must be a date (YYYY-MM-DD)' })
  auction_end_date?: string | null;

  @IsOptional() @IsInt() @Min(0) @Max(INT32_MAX) bid_count?: number | null;
  @IsOptional() @IsString() @MaxLength(64) sale_type?: string | null;
  @IsOptional() @IsString() @MaxLength(64) price_type?: string | null;

  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(INT32_MAX)
  mileage?: number | null;

  @IsOptional() @IsIn(['mi', 'km']) mileage_unit?: 'mi' | 'km' | null;
  @IsOptional() @IsString() @MaxLength(64) vin?: string | null;
  @IsOptional() @IsString() @MaxLength(TEXT_MAX) title_status?: string | null;
  @IsOptional() @IsString() @MaxLength(TEXT_MAX) city?: string | null;
  @IsOptional() @IsString() @MaxLength(TEXT_MAX) state?: string | null;
  @IsOptional() @IsString() @MaxLength(64) zip?: string | null;
  @IsOptional() @IsString() @MaxLength(8) country_code?: string | null;
  @IsOptional() @IsString() @MaxLength(TEXT_MAX) seller_username?: string | null;
  @IsOptional() @IsString() @MaxLength(64) seller_type?: string | null;
  @IsOptional() @IsBoolean() has_reserve?: boolean | null;
  @IsOptional() @IsString() @MaxLength(TEXT_MAX) engine?: string | null;
  @IsOptional() @IsString() @MaxLength(TEXT_MAX) drivetrain?: string | null;
  @IsOptional() @IsString() @MaxLength(TEXT_MAX) transmission?: string | null;
  @IsOptional() @IsString() @MaxLength(TEXT_MAX) body_style?: string | null;
  @IsOptional() @IsString() @MaxLength(TEXT_MAX) exterior_color?: string | null;
  @IsOptional() @IsString() @MaxLength(TEXT_MAX) interior_color?: string | null;
  @IsOptional() @IsString() @MaxLength(LONG_TEXT_MAX) description?: string | null;
  @IsOptional() @IsString() @MaxLength(LONG_TEXT_MAX) ownership_history?: string | null;
  @IsOptional() @IsArray() @ArrayMaxSize(LIST_MAX) @IsString({ each: true }) modifications?: string[] | null;
  @IsOptional() @IsArray() @ArrayMaxSize(LIST_MAX) @IsString({ each: true }) known_flaws?: string[] | null;
  @IsOptional() @IsArray() @ArrayMaxSize(LIST_MAX) @IsString({ each: true }) recent_service_history?: string[] | null;
  @IsOptional() @IsArray() @ArrayMaxSize(LIST_MAX) @IsString({ each: true }) listing_details?: string[] | null;
  @IsOptional() @IsString() @MaxLength(TEXT_MAX) featured_image_url?: string | null;
  @IsOptional() @IsInt() @Min(0) @Max(INT32_MAX) views?: number | null;
  @IsOptional() @IsInt() @Min(0) @Max(INT32_MAX) watches?: number | null;
  @IsOptional() @IsInt() @Min(0) @Max(INT32_MAX) likes?: number | null;
  @IsOptional() @IsInt() @Min(0) @Max(INT32_MAX) comments?: number | null;
}

export class ObservationDto implements Observation {
  @IsString()
  @Matches(SOURCE_PATTERN, { message: 'source must be a lowercase platform identifier' })
  source: string;

  @IsString()
  @MinLength(1)
  @MaxLength(200)
  source_auction_id: string;

  @IsString()
  @Matches(INSTANT_PATTERN, { message: 'observed_at must be an ISO 8601 instant with Z or an offset' })
  observed_at: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => ObservationAuctionDto)
  auction?: ObservationAuctionDto | null;

  @IsOptional()
  @IsArray()
  @ArrayMaxSize(10000)
  @ValidateNested({ each: true })
  @Type(() => ObservationBidDto)
  bids?: ObservationBidDto[] | null;
}
