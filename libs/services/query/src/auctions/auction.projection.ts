import { AuctionDto, BidDto, JsonText, LiveAuctionDto, PaginationMetaDto } from '@cars/contracts';

/**
 * Response items are serialized by PostgreSQL (`json_build_object`, in the contract's field order)
 * from an explicit projection per contract field — never a row or entity dump, so no other column
 * can leak. The `Record<keyof Dto, …>` types make the compiler check that every field of the
 * contract type, and nothing else, is projected. Pages then travel as JSON text to the gateway,
 * which sends them unchanged (see JsonText).
 */

/** ISO 8601 UTC with milliseconds and `Z`, like `Date#toISOString`. */
const instant = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const list = (column: string) => `coalesce(${column}, '{}'::text[])`;

export const AUCTION_FIELDS: Readonly<Record<keyof AuctionDto, string>> = {
  id: 'a.id',
  source: 'a.source',
  url: 'a.url',
  title: 'a.title',
  auction_status: 'a.auction_status',
  price: 'a.price',
  currency: 'a.currency',
  auction_end_date: `to_char(a.auction_end_date, 'YYYY-MM-DD')`,
  auction_end_at: instant('a.auction_end_at'),
  mileage: 'a.mileage',
  mileage_unit: 'a.mileage_unit',
  vin: 'a.vin',
  title_status: 'a.title_status',
  city: 'a.city',
  state: 'a.state',
  zip: 'a.zip',
  country_code: 'a.country_code',
  seller_username: 'a.seller_username',
  year: 'a.year',
  has_reserve: 'a.has_reserve',
  listing_make: 'a.listing_make',
  listing_model: 'a.listing_model',
  ocd_make_name: 'a.ocd_make_name',
  ocd_model_name: 'a.ocd_model_name',
  engine: 'a.engine',
  drivetrain: 'a.drivetrain',
  transmission: 'a.transmission',
  body_style: 'a.body_style',
  exterior_color: 'a.exterior_color',
  standard_exterior_color: 'a.standard_exterior_color',
  interior_color: 'a.interior_color',
  standard_interior_color: 'a.standard_interior_color',
  seller_type: 'a.seller_type',
  description: 'a.description',
  ownership_history: 'a.ownership_history',
  modifications: list('a.modifications'),
  known_flaws: list('a.known_flaws'),
  recent_service_history: list('a.recent_service_history'),
  listing_details: list('a.listing_details'),
  created_at: instant('a.created_at'),
  featured_image_url: 'a.featured_image_url',
  stats:
    `json_build_object('views', a.views, 'watches', a.watches, 'likes', a.likes, 'bids', a.bid_count, ` +
    `'unique_bidder_count', a.unique_bidder_count)`,
};

/** What a live item adds to an auction item. */
export const LIVE_AUCTION_FIELDS: Readonly<Record<Exclude<keyof LiveAuctionDto, keyof AuctionDto>, string>> = {
  image_url: 'a.featured_image_url',
  updated_at: instant('a.updated_at'),
};

export const BID_FIELDS: Readonly<Record<keyof BidDto, string>> = {
  id: 'b.id',
  auction_id: 'b.auction_id',
  bidder_name: 'b.bidder_name',
  amount: 'b.amount',
  currency: 'b.currency',
  bid_at: instant('b.bid_at'),
  created_at: instant('b.created_at'),
};

/**
 * A `LATERAL` subquery selecting one column per field, named after it: `row_to_json` of it is the
 * item's compact JSON object, keys in this order. Field names are identifiers of the contract
 * types, never input.
 */
export function jsonFields(fields: Readonly<Record<string, string>>): string {
  return Object.entries(fields)
    .map(([name, expr]) => {
      if (!/^[a-z_]+$/.test(name)) throw new Error(`bad field name ${name}`);
      return `${expr} AS ${name}`;
    })
    .join(', ');
}

/** The paginated envelope `{data, meta}` around items already serialized. */
export function pageJson<T>(items: readonly string[], meta: PaginationMetaDto): JsonText<{ data: T[]; meta: PaginationMetaDto }> {
  return `{"data":[${items.join(',')}],"meta":${JSON.stringify(meta)}}`;
}
