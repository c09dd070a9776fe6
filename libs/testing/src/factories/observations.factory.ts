import { Observation } from '@cars/contracts';

/**
 * A scraper's observation of a live Bring a Trailer auction, without bids (a 1973 Porsche 911
 * Carrera RS unless told otherwise): the first of an auction makes an `auction.created`, a later
 * one with another price an `auction.updated`.
 */
export function liveObservation(sourceAuctionId: string, overrides: { title?: string; price?: number } = {}): Observation {
  return {
    source: 'bringatrailer',
    source_auction_id: sourceAuctionId,
    observed_at: new Date().toISOString(),
    auction: {
      url: `https://bringatrailer.com/listing/${sourceAuctionId}`,
      title: overrides.title ?? `1973 Porsche 911 Carrera RS ${sourceAuctionId}`,
      status: 'active',
      price: overrides.price ?? 100000,
      currency: 'USD',
      year: 1973,
      make: 'Porsche',
      model: '911 Carrera RS',
      auction_end_at: '2026-12-01T19:00:00',
      auction_end_date: '2026-12-01',
      bid_count: 1,
      sale_type: 'auction',
      price_type: 'bid',
    },
    bids: [],
  } as unknown as Observation;
}
