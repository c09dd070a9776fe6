/**
 * The columns of `auctions` that describe the auction itself (snake_case, as in SQL): what
 * ingestion writes and what test factories insert. Kept by the table on their own: id,
 * created_at, updated_at, unique_bidder_count.
 */
export interface AuctionRecord {
  source: string;
  source_auction_id: string;
  url: string | null;
  title: string | null;
  source_status: string;
  auction_status: string | null;
  is_live: boolean;
  price: number | null;
  currency: string | null;
  price_usd: number | null;
  auction_end_date: string | null;
  auction_end_at: string | null;
  auction_end_local: string | null;
  mileage: number | null;
  mileage_unit: string | null;
  vin: string | null;
  title_status: string | null;
  city: string | null;
  state: string | null;
  zip: string | null;
  country_code: string | null;
  seller_username: string | null;
  seller_type: string | null;
  year: number | null;
  has_reserve: boolean | null;
  listing_make: string | null;
  listing_model: string | null;
  ocd_make_name: string | null;
  ocd_model_name: string | null;
  engine: string | null;
  drivetrain: string | null;
  transmission: string | null;
  body_style: string | null;
  exterior_color: string | null;
  standard_exterior_color: string | null;
  interior_color: string | null;
  standard_interior_color: string | null;
  description: string | null;
  ownership_history: string | null;
  modifications: string[];
  known_flaws: string[];
  recent_service_history: string[];
  listing_details: string[];
  featured_image_url: string | null;
  views: number | null;
  watches: number | null;
  likes: number | null;
  comments: number | null;
  bid_count: number | null;
  sale_type: string | null;
  price_type: string | null;
  observed_at: string;
}

/** The columns of `bids` that describe the bid itself (kept by the table: id, auction_id, timestamps). */
export interface BidRecord {
  source: string;
  source_bid_id: string;
  bidder_name: string | null;
  amount: number | null;
  currency: string | null;
  bid_at: string | null;
  bid_at_local: string | null;
}
