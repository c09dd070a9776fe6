import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { DateTimeParam, EnumParam, IntegerParam, KeywordParam, NotGreaterThan, RequiresOneOf, TextParam } from './auctions.validators';
import {
  CursorParam,
  MAX_LIMIT,
  PageParam,
  PaginationMetaDto,
  PaginationMode,
  PaginationModeParam,
  SORT_DIRECTIONS,
  SortDirection,
} from './pagination.dto';

// ---------------------------------------------------------------------------------------------
// Enumerations (docs/api/query.md)
// ---------------------------------------------------------------------------------------------

/** Platform identifiers of the data set. */
export const AUCTION_SOURCES = [
  'bringatrailer',
  'carsandbids',
  'pcarmarket',
  'hagerty',
  'hemmings',
  'collectingcars',
  'carandclassic',
] as const;
export type AuctionSource = (typeof AUCTION_SOURCES)[number];

/** The platforms followed live; `source` on /auctions/live accepts only these. */
export const LIVE_AUCTION_SOURCES = ['bringatrailer', 'carsandbids'] as const;

/** REST auction_status values. */
export const AUCTION_STATUSES = ['sold', 'bid to', 'reserve not met', 'canceled', 'unknown', 'withdrawn'] as const;
export type AuctionStatus = (typeof AUCTION_STATUSES)[number];

export const AUCTION_SORTS = ['date', 'price', 'year', 'bids'] as const;
export type AuctionSort = (typeof AUCTION_SORTS)[number];

export const LIVE_AUCTION_SORTS = ['ending', 'created', 'updated', 'price', 'year', 'bids'] as const;
export type LiveAuctionSort = (typeof LIVE_AUCTION_SORTS)[number];

export const AUCTIONS_DEFAULT_LIMIT = 50;

/** Largest auction id (bigint). */
export const MAX_AUCTION_ID = '9223372036854775807';

// ---------------------------------------------------------------------------------------------
// Query parameters
// ---------------------------------------------------------------------------------------------

const MODEL_NEEDS_MAKE =
  'model requires make (or vin or seller_username): model names are only unique within a make';

/** Filters and paging shared by GET /auctions and GET /auctions/live. */
export abstract class AuctionFilterQueryDto {
  @ApiPropertyOptional({ description: 'Exact make name from /makes (`ocd_make_name`).', minLength: 1, maxLength: 100, example: 'Porsche' })
  @TextParam(100)
  make?: string;

  @ApiPropertyOptional({
    description: 'Exact model name from /models for the make (`ocd_model_name`). Requires `make`, unless `vin` or `seller_username` is given.',
    minLength: 1,
    maxLength: 100,
    example: '911',
  })
  @TextParam(100)
  @RequiresOneOf(['make', 'vin', 'seller_username'], MODEL_NEEDS_MAKE)
  model?: string;

  @ApiPropertyOptional({ description: 'Exact, case-sensitive VIN as stored.', minLength: 1, maxLength: 64, example: 'WP0AB0916KS120123' })
  @TextParam(64)
  vin?: string;

  @ApiPropertyOptional({ description: 'Exact seller username.', minLength: 1, maxLength: 100, example: 'flat6fan' })
  @TextParam(100)
  seller_username?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 9999, description: 'Lowest model year (inclusive); not above `year_max`.', example: 1964 })
  @IntegerParam(0, 9999)
  @NotGreaterThan('year_max')
  year_min?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 9999, description: 'Highest model year (inclusive).', example: 1973 })
  @IntegerParam(0, 9999)
  year_max?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'Lowest `price` (inclusive, in the item currency); not above `price_max`.',
    example: 50000,
  })
  @IntegerParam(0, Number.MAX_SAFE_INTEGER)
  @NotGreaterThan('price_max')
  price_min?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'Highest `price` (inclusive, in the item currency).',
    example: 150000,
  })
  @IntegerParam(0, Number.MAX_SAFE_INTEGER)
  price_max?: number;

  @ApiPropertyOptional({
    description:
      'Case-insensitive substring of the title or the description (surrounding spaces ignored). It must contain a ' +
      'space-separated part of 3 or more characters, which the indexes look up ("M3 coupe", "911"; not "M3" or ' +
      '"a b": 400 `Validation Error` on `keyword`).',
    minLength: 1,
    maxLength: 100,
    pattern: '[^ ]{3}',
    example: 'matching numbers',
  })
  @KeywordParam(100)
  keyword?: string;

  @PageParam()
  page?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: AUCTIONS_DEFAULT_LIMIT, description: 'Items per page.' })
  @IntegerParam(1, MAX_LIMIT)
  limit?: number;

  @PaginationModeParam()
  pagination?: PaginationMode;

  @CursorParam()
  cursor?: string;
}

/** GET /auctions: completed auctions. */
export class SearchAuctionsQueryDto extends AuctionFilterQueryDto {
  @ApiPropertyOptional({ enum: AUCTION_STATUSES, description: 'REST auction status.', example: 'sold' })
  @EnumParam(AUCTION_STATUSES)
  status?: AuctionStatus;

  @ApiPropertyOptional({ enum: AUCTION_SOURCES, description: 'Platform identifier.', example: 'bringatrailer' })
  @EnumParam(AUCTION_SOURCES)
  source?: AuctionSource;

  @ApiPropertyOptional({
    enum: AUCTION_SORTS,
    default: 'date',
    description: '`date` = auction end date, `bids` = bid count; ties broken by `id`; null values sort last.',
  })
  @EnumParam(AUCTION_SORTS)
  sort?: AuctionSort;

  @ApiPropertyOptional({ enum: SORT_DIRECTIONS, default: 'desc' })
  @EnumParam(SORT_DIRECTIONS)
  direction?: SortDirection;
}

/** GET /auctions/live: auctions currently running. */
export class LiveAuctionsQueryDto extends AuctionFilterQueryDto {
  @ApiPropertyOptional({
    enum: LIVE_AUCTION_SOURCES,
    description: 'Platform identifier; only the two platforms followed live are accepted (others: 400).',
    example: 'carsandbids',
  })
  @EnumParam(LIVE_AUCTION_SOURCES, 'only these platforms are followed live')
  source?: (typeof LIVE_AUCTION_SOURCES)[number];

  @ApiPropertyOptional({ type: 'string', format: 'date-time', description: 'Auctions ending at or after this instant.', example: '2026-01-31T18:00:00Z' })
  @DateTimeParam()
  @NotGreaterThan('ending_before')
  ending_after?: string;

  @ApiPropertyOptional({ type: 'string', format: 'date-time', description: 'Auctions ending at or before this instant.', example: '2026-02-07T18:00:00Z' })
  @DateTimeParam()
  ending_before?: string;

  @ApiPropertyOptional({
    type: 'string',
    format: 'date-time',
    description: 'Auctions updated at or after this instant (for polling; compare with `updated_at`).',
    example: '2026-01-31T17:55:00Z',
  })
  @DateTimeParam()
  updated_since?: string;

  @ApiPropertyOptional({
    enum: LIVE_AUCTION_SORTS,
    default: 'ending',
    description: '`ending` = end time; ties broken by `id`; null values sort last.',
  })
  @EnumParam(LIVE_AUCTION_SORTS)
  sort?: LiveAuctionSort;

  @ApiPropertyOptional({ enum: SORT_DIRECTIONS, default: 'asc' })
  @EnumParam(SORT_DIRECTIONS)
  direction?: SortDirection;
}

// ---------------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------------

export class AuctionStatsDto {
  @ApiProperty({ type: 'integer', nullable: true, example: 10432 })
  views: number | null;

  @ApiProperty({ type: 'integer', nullable: true, example: 812 })
  watches: number | null;

  @ApiProperty({ type: 'integer', nullable: true, example: 57 })
  likes: number | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Number of bids.', example: 41 })
  bids: number | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'Distinct bidders observed.', example: 17 })
  unique_bidder_count: number | null;
}

const text = (example: string, description?: string) =>
  ApiProperty({ type: 'string', nullable: true, example, ...(description ? { description } : {}) });
const textList = (example: string[]) => ApiProperty({ type: 'string', isArray: true, example, description: 'Never null; empty when unknown.' });

/** An item of GET /auctions, plus the additive `mileage_unit` and `country_code`. */
export class AuctionDto {
  @ApiProperty({ type: 'integer', nullable: true, description: 'Used as `auction_id` in the bids route.', example: 48213 })
  id: number | null;

  @ApiProperty({ type: 'string', nullable: true, enum: [...AUCTION_SOURCES, null], example: 'bringatrailer' })
  source: string | null;

  @ApiProperty({ type: 'string', nullable: true, format: 'uri', example: 'https://bringatrailer.com/listing/1967-porsche-911s-12/' })
  url: string | null;

  @text('1967 Porsche 911S Coupe')
  title: string | null;

  @ApiProperty({ type: 'string', nullable: true, enum: [...AUCTION_STATUSES, null], example: 'sold' })
  auction_status: string | null;

  @ApiProperty({ type: 'number', nullable: true, description: 'Final sale price or highest bid, in `currency`.', example: 145000 })
  price: number | null;

  @text('USD', 'ISO 4217 code.')
  currency: string | null;

  @ApiProperty({ type: 'string', format: 'date', nullable: true, example: '2026-01-31' })
  auction_end_date: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'End instant in UTC when the source publishes a time.', example: '2026-02-01T03:00:00.000Z' })
  auction_end_at: string | null;

  @ApiProperty({ type: 'number', nullable: true, example: 52000 })
  mileage: number | null;

  @ApiProperty({ type: 'string', nullable: true, enum: ['mi', 'km', null], description: 'Additive: unit of `mileage`.', example: 'mi' })
  mileage_unit: string | null;

  @text('WP0AB0916KS120123', 'Raw string, case-sensitive as stored.')
  vin: string | null;

  @text('clean')
  title_status: string | null;

  @text('Portland')
  city: string | null;

  @text('OR')
  state: string | null;

  @text('97201')
  zip: string | null;

  @text('US', 'Additive: ISO 3166-1 alpha-2 country of the listing.')
  country_code: string | null;

  @text('flat6fan')
  seller_username: string | null;

  @ApiProperty({ type: 'integer', nullable: true, example: 1967 })
  year: number | null;

  @ApiProperty({ type: 'boolean', nullable: true, example: true })
  has_reserve: boolean | null;

  @text('Porsche', 'As listed by the source.')
  listing_make: string | null;

  @text('911S', 'As listed by the source.')
  listing_model: string | null;

  @text('Porsche', 'Normalized make name (the `make` filter).')
  ocd_make_name: string | null;

  @text('911', 'Normalized model name (the `model` filter).')
  ocd_model_name: string | null;

  @text('2.0L flat-six')
  engine: string | null;

  @text('RWD')
  drivetrain: string | null;

  @text('5-speed manual')
  transmission: string | null;

  @text('Coupe')
  body_style: string | null;

  @text('Irish Green')
  exterior_color: string | null;

  @text('Green')
  standard_exterior_color: string | null;

  @text('Black leatherette')
  interior_color: string | null;

  @text('Black')
  standard_interior_color: string | null;

  @ApiProperty({ type: 'string', nullable: true, enum: ['private', 'dealer', null], example: 'private' })
  seller_type: string | null;

  @text('This 1967 Porsche 911S…')
  description: string | null;

  @text('Two owners since new.')
  ownership_history: string | null;

  @textList(['Period-correct Fuchs wheels'])
  modifications: string[];

  @textList(['Stone chips on the hood'])
  known_flaws: string[];

  @textList(['Valve adjustment in 2024'])
  recent_service_history: string[];

  @textList(['Chassis no. 308123S'])
  listing_details: string[];

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: '2026-01-24T18:00:00.000Z' })
  created_at: string | null;

  @ApiProperty({ type: 'string', nullable: true, format: 'uri', example: 'https://bringatrailer.com/wp-content/uploads/911s.jpg' })
  featured_image_url: string | null;

  @ApiProperty({ type: () => AuctionStatsDto, description: 'Always an object; members may be null.' })
  stats: AuctionStatsDto;
}

/** An item of GET /auctions/live: an auction plus `image_url` (deprecated) and `updated_at`. */
export class LiveAuctionDto extends AuctionDto {
  @ApiProperty({
    type: 'string',
    nullable: true,
    format: 'uri',
    deprecated: true,
    description: 'Deprecated alias of `featured_image_url`.',
    example: 'https://bringatrailer.com/wp-content/uploads/911s.jpg',
  })
  image_url: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, example: '2026-01-31T17:58:12.000Z' })
  updated_at: string | null;
}

export class AuctionListResponseDto {
  @ApiProperty({ type: () => AuctionDto, isArray: true })
  data: AuctionDto[];

  @ApiProperty({ type: () => PaginationMetaDto })
  meta: PaginationMetaDto;
}

export class LiveAuctionListResponseDto {
  @ApiProperty({ type: () => LiveAuctionDto, isArray: true })
  data: LiveAuctionDto[];

  @ApiProperty({ type: () => PaginationMetaDto })
  meta: PaginationMetaDto;
}
