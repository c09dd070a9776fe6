import { EVENT_API_VERSION, EventEnvelope, EventType, WEBHOOK_TEST_MESSAGE } from './event-envelope';

const AUCTION = {
  id: '48213',
  source: 'bringatrailer',
  url: 'https://bringatrailer.com/listing/1968-porsche-911-47/',
  title: '1968 Porsche 911',
  status: 'active',
  price: 98_000,
  currency: 'USD',
  year: 1968,
  make: 'Porsche',
  model: '911',
  auction_end_at: '2026-11-30T11:30:00',
  auction_end_date: '2026-11-30',
  bid_count: 23,
  sale_type: 'auction',
  price_type: 'bid',
};

/**
 * One sample of each event type, as a receiver gets it: the event catalog (`docs/api/events.md`,
 * the `examples` of `/schemas/events.json`) and the console's event picker show these, and a test
 * validates them against the generated schema.
 */
export const EVENT_SAMPLES: { [T in EventType]: EventEnvelope<T> } = {
  'auction.created': {
    id: 'evt_0b6f0a52-8d0e-4f43-9d55-1f1a4f6f2c10',
    type: 'auction.created',
    api_version: EVENT_API_VERSION,
    created_at: '2026-11-23T16:02:11.482Z',
    data: { auction: { ...AUCTION, price: 15_000, bid_count: 1 }, changes: {} },
  },
  'auction.updated': {
    id: 'evt_5d1c3e77-2a4b-4a8e-b0a6-7c2e9f1d3b44',
    type: 'auction.updated',
    api_version: EVENT_API_VERSION,
    created_at: '2026-11-29T21:14:05.037Z',
    data: {
      auction: { ...AUCTION },
      changes: { price: { before: 92_500, after: 98_000 }, bid_count: { before: 22, after: 23 } },
    },
  },
  'auction.ended': {
    id: 'evt_9e2a7b10-6c3d-4f5e-8a1b-2d4c6e8f0a12',
    type: 'auction.ended',
    api_version: EVENT_API_VERSION,
    created_at: '2026-11-30T19:41:57.910Z',
    data: {
      auction: { ...AUCTION, status: 'sold', price: 131_000, bid_count: 41, price_type: 'sold' },
      changes: { status: { before: 'active', after: 'sold' }, price: { before: 98_000, after: 131_000 }, bid_count: { before: 23, after: 41 } },
    },
  },
  'bid.created': {
    id: 'evt_3c8d1f26-7b9a-4e0c-a5d2-6f1e3b7a9c58',
    type: 'bid.created',
    api_version: EVENT_API_VERSION,
    created_at: '2026-11-29T21:14:05.041Z',
    data: { bid: { id: '1730442', auction_id: '48213', amount: 98_000, currency: 'USD', bid_at: '2026-11-29T13:13:58' } },
  },
  'webhook.test': {
    id: 'evt_7a4e2c91-0d3b-4b6f-9e8a-5c1d7f3b2e60',
    type: 'webhook.test',
    api_version: EVENT_API_VERSION,
    created_at: '2026-11-26T12:00:00.000Z',
    data: { message: WEBHOOK_TEST_MESSAGE },
  },
};
