import {
  CURRENCY_PATTERN,
  DATE_PATTERN,
  INSTANT_PATTERN,
  SOURCE_PATTERN,
  WALL_CLOCK_PATTERN,
} from './observation.dto';

/**
 * The same rules as ObservationDto as a JSON Schema (draft 2020-12 subset), for validators that
 * must be fast (the change-detector checks thousands of observations per second with it and
 * falls back to the DTO for the messages of a rejection). ObservationDto stays the reference:
 * this schema must never accept what the DTO rejects (a unit test holds them together).
 */
const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: 'null' }] });
const text = (maxLength: number) => nullable({ type: 'string', maxLength });
const int = (minimum: number, maximum: number) => nullable({ type: 'integer', minimum, maximum });
const num = (minimum: number, maximum: number) => nullable({ type: 'number', minimum, maximum });
const pattern = (re: RegExp) => nullable({ type: 'string', pattern: re.source });
const list = nullable({ type: 'array', maxItems: 500, items: { type: 'string' } });

const INT32_MAX = 2147483647;
const PRICE_MAX = 1e12;
const TEXT_MAX = 2000;
const LONG_TEXT_MAX = 200000;

export const OBSERVATION_BID_JSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['source_bid_id'],
  properties: {
    source_bid_id: { type: 'string', minLength: 1, maxLength: 200 },
    bidder_name: text(TEXT_MAX),
    amount: num(0, PRICE_MAX),
    currency: pattern(CURRENCY_PATTERN),
    bid_at: pattern(WALL_CLOCK_PATTERN),
  },
} as const;

export const OBSERVATION_AUCTION_JSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['status'],
  properties: {
    url: text(TEXT_MAX),
    title: text(TEXT_MAX),
    status: { type: 'string', minLength: 1, maxLength: 64 },
    price: num(0, PRICE_MAX),
    currency: pattern(CURRENCY_PATTERN),
    year: int(1800, 2200),
    make: text(TEXT_MAX),
    model: text(TEXT_MAX),
    auction_end_at: pattern(WALL_CLOCK_PATTERN),
    auction_end_date: pattern(DATE_PATTERN),
    bid_count: int(0, INT32_MAX),
    sale_type: text(64),
    price_type: text(64),
    mileage: num(0, INT32_MAX),
    mileage_unit: { enum: ['mi', 'km', null] },
    vin: text(64),
    title_status: text(TEXT_MAX),
    city: text(TEXT_MAX),
    state: text(TEXT_MAX),
    zip: text(64),
    country_code: text(8),
    seller_username: text(TEXT_MAX),
    seller_type: text(64),
    has_reserve: nullable({ type: 'boolean' }),
    engine: text(TEXT_MAX),
    drivetrain: text(TEXT_MAX),
    transmission: text(TEXT_MAX),
    body_style: text(TEXT_MAX),
    exterior_color: text(TEXT_MAX),
    interior_color: text(TEXT_MAX),
    description: text(LONG_TEXT_MAX),
    ownership_history: text(LONG_TEXT_MAX),
    modifications: list,
    known_flaws: list,
    recent_service_history: list,
    listing_details: list,
    featured_image_url: text(TEXT_MAX),
    views: int(0, INT32_MAX),
    watches: int(0, INT32_MAX),
    likes: int(0, INT32_MAX),
    comments: int(0, INT32_MAX),
  },
} as const;

export const OBSERVATION_JSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['source', 'source_auction_id', 'observed_at'],
  properties: {
    source: { type: 'string', pattern: SOURCE_PATTERN.source },
    source_auction_id: { type: 'string', minLength: 1, maxLength: 200 },
    observed_at: { type: 'string', pattern: INSTANT_PATTERN.source },
    auction: nullable(OBSERVATION_AUCTION_JSON_SCHEMA),
    bids: nullable({ type: 'array', maxItems: 10000, items: OBSERVATION_BID_JSON_SCHEMA }),
  },
} as const;
