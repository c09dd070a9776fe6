import type { FromSchema } from 'json-schema-to-ts';

/**
 * The observation (docs/api/ingestion.md, "The observation"): what a scraper, the import CLI or
 * the simulator sends to the `observations` queue, one JSON object per message (NDJSON in files;
 * a message may also carry an array of them). Field names follow the webhook events' `data.auction`
 * where they overlap.
 *
 * This JSON Schema is the one definition of the contract: the TypeScript types below are derived
 * from it (`FromSchema`), and `validateObservation` (observation.validation.ts) compiles it with
 * ajv and words the rejection reasons from ajv's errors. Unknown members are errors; an optional
 * member may also be null.
 *
 * Times: `observed_at` is an ISO 8601 instant (with `Z` or an offset). `auction_end_at` and
 * `bid_at` are the source's wall-clock times without an offset (read in the source's time zone);
 * an offset, when a source sends one, is honoured. `auction_end_date` is a date (YYYY-MM-DD) for
 * date-only sources. Prices and amounts are in whole units of `currency` (fractions are rounded).
 *
 * `x-message` is an annotation of this contract (no validation of its own): what a rejection says
 * when a value does not match the member's `pattern`.
 */

/** ISO 8601 instant: date, time, and `Z` or an offset. */
export const INSTANT_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
/** Source wall-clock time (offset tolerated, then honoured). */
export const WALL_CLOCK_PATTERN = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/;
export const DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
export const CURRENCY_PATTERN = /^[A-Z]{3}$/;
export const SOURCE_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

/** The annotation keyword of a member's rejection message (see above). */
export const OBSERVATION_MESSAGE_KEYWORD = 'x-message';

const INT32_MAX = 2147483647;
/** Prices up to a trillion units: far beyond any car, well inside bigint and 2^53. */
const PRICE_MAX = 1e12;
const TEXT_MAX = 2000;
const LONG_TEXT_MAX = 200000;
const LIST_MAX = 500;
const BIDS_MAX = 10000;

// Optional members: the value may also be null (`type` lists `null`; the other keywords apply to
// non-null values only).
const text = <N extends number>(maxLength: N) => ({ type: ['string', 'null'], maxLength }) as const;
const int = <Min extends number, Max extends number>(minimum: Min, maximum: Max) =>
  ({ type: ['integer', 'null'], minimum, maximum }) as const;
const num = <Min extends number, Max extends number>(minimum: Min, maximum: Max) =>
  ({ type: ['number', 'null'], minimum, maximum }) as const;
const matching = <M extends string>(re: RegExp, message: M) =>
  ({ type: ['string', 'null'], pattern: re.source, [OBSERVATION_MESSAGE_KEYWORD]: message }) as const;
const list = { type: ['array', 'null'], maxItems: LIST_MAX, items: { type: 'string' } } as const;

const CURRENCY_MESSAGE = 'must be an ISO 4217 code (e.g. USD)';
const WALL_CLOCK_MESSAGE = 'must be a date-time (YYYY-MM-DDTHH:MM:SS)';

export const OBSERVATION_BID_JSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['source_bid_id'],
  properties: {
    source_bid_id: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: 'The source identity of the bid: a bid fires `bid.created` once per (source, source_bid_id), ever.',
    },
    bidder_name: text(TEXT_MAX),
    amount: num(0, PRICE_MAX),
    currency: matching(CURRENCY_PATTERN, CURRENCY_MESSAGE),
    bid_at: matching(WALL_CLOCK_PATTERN, WALL_CLOCK_MESSAGE),
  },
} as const;

export const OBSERVATION_AUCTION_JSON_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['status'],
  properties: {
    url: text(TEXT_MAX),
    title: text(TEXT_MAX),
    status: {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description:
        'Source status: active, coming soon, sold, reserve not met, result unavailable, canceled, withdrawn, or another value (stored and passed through).',
    },
    price: num(0, PRICE_MAX),
    currency: matching(CURRENCY_PATTERN, CURRENCY_MESSAGE),
    year: int(1800, 2200),
    make: text(TEXT_MAX),
    model: text(TEXT_MAX),
    auction_end_at: matching(WALL_CLOCK_PATTERN, WALL_CLOCK_MESSAGE),
    auction_end_date: matching(DATE_PATTERN, 'must be a date (YYYY-MM-DD)'),
    bid_count: int(0, INT32_MAX),
    sale_type: text(64),
    price_type: text(64),
    mileage: num(0, INT32_MAX),
    mileage_unit: { type: ['string', 'null'], enum: ['mi', 'km', null] },
    vin: text(64),
    title_status: text(TEXT_MAX),
    city: text(TEXT_MAX),
    state: text(TEXT_MAX),
    zip: text(64),
    country_code: text(8),
    seller_username: text(TEXT_MAX),
    seller_type: text(64),
    has_reserve: { type: ['boolean', 'null'] },
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
  title: 'Observation',
  type: 'object',
  additionalProperties: false,
  required: ['source', 'source_auction_id', 'observed_at'],
  properties: {
    source: {
      type: 'string',
      pattern: SOURCE_PATTERN.source,
      [OBSERVATION_MESSAGE_KEYWORD]: 'must be a lowercase platform identifier',
      description: 'Platform identifier (lowercase), e.g. `bringatrailer`.',
    },
    source_auction_id: { type: 'string', minLength: 1, maxLength: 200 },
    observed_at: {
      type: 'string',
      pattern: INSTANT_PATTERN.source,
      [OBSERVATION_MESSAGE_KEYWORD]: 'must be an ISO 8601 instant with Z or an offset',
      description: 'When the scraper saw it (ISO 8601 instant).',
    },
    auction: {
      ...OBSERVATION_AUCTION_JSON_SCHEMA,
      type: ['object', 'null'],
      description: 'Omitted for a bids-only observation (it stays pending until its parent auction exists).',
    },
    bids: { type: ['array', 'null'], maxItems: BIDS_MAX, items: OBSERVATION_BID_JSON_SCHEMA },
  },
} as const;

/** A valid observation (the type of what `validateObservation` accepts). */
export type Observation = FromSchema<typeof OBSERVATION_JSON_SCHEMA>;
export type ObservationAuction = FromSchema<typeof OBSERVATION_AUCTION_JSON_SCHEMA>;
export type ObservationBid = FromSchema<typeof OBSERVATION_BID_JSON_SCHEMA>;
