import 'reflect-metadata';
import { AuctionEventData, BidEventData, EVENT_API_VERSION, EventHeaders, ObservationHeaders } from '@cars/contracts';
import { createDataSource } from '@cars/persistence';
import { createIsolatedDatabase, createVhost, deleteVhost } from '@cars/testing';
import { NormalizationService, ObservationConsumer, ObservationProcessor, OutboxRelay, RmqEventPublisher } from '@cars/service-change-detector';
import { DateTime } from 'luxon';
import { DataSource } from 'typeorm';
import { EventHarness, ReceivedEvent } from './support/event-harness';

/**
 * The change-detector over the run's real RabbitMQ and PostgreSQL (a database and vhost of its
 * own): observations in on `observations`, events out on `auction.events`.
 */
jest.setTimeout(60000);

let database: { url: string; drop: () => Promise<void> };
let vhost: string;
let dataSource: DataSource;
let processor: ObservationProcessor;
let consumer: ObservationConsumer;
let relay: OutboxRelay;
let publisher: RmqEventPublisher;
let harness: EventHarness;
let normalization: NormalizationService;
let harnessUrl: string;

beforeAll(async () => {
  database = await createIsolatedDatabase('cd_pipeline');
  vhost = `${process.env.TEST_RUN_ID}_cd_pipeline`;
  const url = createVhost(vhost);
  harnessUrl = url;
  dataSource = await createDataSource({ url: database.url, poolSize: 6 }).initialize();
  normalization = new NormalizationService(dataSource);
  await normalization.loadReference();
  harness = await EventHarness.create(url);
  processor = new ObservationProcessor(dataSource);
  publisher = new RmqEventPublisher(url);
  await publisher.ready();
  relay = new OutboxRelay(dataSource, publisher, { listenUrl: database.url, pollIntervalMs: 500 });
  await relay.start();
  consumer = new ObservationConsumer(processor, { url, batchSize: 50, concurrency: 2 });
  await consumer.start();
});

afterAll(async () => {
  await consumer?.stop();
  await relay?.stop();
  await publisher?.close();
  await harness?.close();
  await dataSource?.destroy();
  deleteVhost(vhost);
  await database?.drop();
});

let counter = 0;
let clock = Date.parse('2026-11-21T12:00:00Z');
const nextId = (prefix = 'a') => `${prefix}${(counter += 1)}`;
const observedAt = () => new Date((clock += 1000)).toISOString();

type AuctionPart = Record<string, unknown>;
const baseAuction: AuctionPart = {
  url: 'https://bringatrailer.com/listing/1967-porsche-911s',
  title: '1967 Porsche 911S Coupe',
  status: 'active',
  price: 145000,
  currency: 'USD',
  year: 1967,
  make: 'Porsche',
  model: '911S Coupe',
  auction_end_at: '2026-11-25T19:00:00',
  auction_end_date: null,
  bid_count: 31,
  sale_type: 'auction',
  price_type: 'bid',
  mileage: 52000,
  mileage_unit: 'mi',
  views: 1234,
  watches: 56,
  likes: 7,
  comments: 12,
  modifications: [],
  known_flaws: [],
  recent_service_history: [],
  listing_details: [],
};
const observation = (id: string, auction: AuctionPart = {}, bids: object[] = [], source = 'bringatrailer') => ({
  source,
  source_auction_id: id,
  observed_at: observedAt(),
  auction: { ...baseAuction, ...auction },
  bids,
});
const bid = (id: string, amount: number, bidAt = '2026-11-21T11:59:40') => ({
  source_bid_id: id,
  bidder_name: `bidder-${id}`,
  amount,
  currency: 'USD',
  bid_at: bidAt,
});

/** Publishes and waits until the consumer has settled (committed and acked) every message. */
async function send(...messages: (object | string)[]): Promise<void> {
  const before = consumer.stats.acked;
  await harness.publish(...messages);
  await harness.waitFor(() => consumer.stats.acked >= before + messages.length, 15000, 'the consumer to ack');
}

async function auctionId(sourceAuctionId: string): Promise<string> {
  const rows: { id: string }[] = await dataSource.query(`SELECT id::text AS id FROM auctions WHERE source_auction_id = $1`, [
    sourceAuctionId,
  ]);
  return rows[0].id;
}

/**
 * Events that arrived since `mark`, proven complete: a sentinel auction sent after them (events
 * are relayed in outbox order) must arrive first. The sentinel's own event is left out.
 */
/**
 * A position in `harness.events` after every event of what was sent so far: the relay publishes
 * asynchronously after the consumer acks, so `harness.events.length` right after a send could
 * still be short of that send's events. A sentinel goes through first (events arrive in `seq`
 * order).
 */
async function settledMark(): Promise<number> {
  await eventsSince(harness.events.length);
  return harness.events.length;
}

async function eventsSince(mark: number): Promise<ReceivedEvent[]> {
  const title = `sentinel ${nextId('s')}`;
  await send(observation(nextId('sentinel-'), { title }));
  await harness.waitFor(
    () => harness.events.some((e) => e.envelope.type === 'auction.created' && (e.envelope.data as AuctionEventData).auction.title === title),
    15000,
    'the sentinel event',
  );
  return harness.events
    .slice(mark)
    .filter((e) => !(e.envelope.type === 'auction.created' && (e.envelope.data as AuctionEventData).auction.title === title));
}

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('change-detector pipeline', () => {
  it('a new auction fires auction.created with empty changes, in the exact envelope', async () => {
    const id = nextId();
    const mark = await settledMark();
    const before = new Date();
    await send(observation(id));
    const after = new Date();
    const received = await eventsSince(mark);
    const rowId = await auctionId(id);
    expect(received).toHaveLength(1);
    const [event] = received;
    expect(event.routingKey).toBe('auction.created');
    expect(event.routing).toEqual({ make: 'Porsche', source: 'bringatrailer', auction_id: rowId });
    const envelope = event.envelope;
    expect(Object.keys(envelope)).toEqual(['id', 'type', 'api_version', 'created_at', 'data']);
    expect(envelope.id).toMatch(/^evt_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    // The relay's batch form carries the outbox sequence number beside the envelope (the
    // single-event form's message id is the envelope's: see the spec of that form below).
    const [stored] = await dataSource.query(`SELECT seq::text AS seq FROM events WHERE id = $1`, [envelope.id]);
    expect(event.seq).toBe(stored.seq);
    expect(envelope.type).toBe('auction.created');
    expect(envelope.api_version).toBe(EVENT_API_VERSION);
    expect(envelope.api_version).toBe('2026-10-17');
    expect(envelope.created_at).toMatch(ISO_UTC);
    // Observation time in the service, not the source's observed_at.
    expect(Date.parse(envelope.created_at)).toBeGreaterThanOrEqual(before.getTime() - 5);
    expect(Date.parse(envelope.created_at)).toBeLessThanOrEqual(after.getTime() + 5);
    expect(envelope.data).toEqual({
      auction: {
        id: rowId,
        source: 'bringatrailer',
        url: 'https://bringatrailer.com/listing/1967-porsche-911s',
        title: '1967 Porsche 911S Coupe',
        status: 'active',
        price: 145000,
        currency: 'USD',
        year: 1967,
        make: 'Porsche',
        model: '911S Coupe',
        auction_end_at: '2026-11-25T19:00:00',
        auction_end_date: '2026-11-25',
        bid_count: 31,
        sale_type: 'auction',
        price_type: 'bid',
      },
      changes: {},
    });
    const [row] = await dataSource.query(
      `SELECT is_live, auction_status, ocd_make_name, ocd_model_name, auction_end_at, to_char(auction_end_local, 'YYYY-MM-DD"T"HH24:MI:SS') AS local
       FROM auctions WHERE id = $1`,
      [rowId],
    );
    expect(row).toMatchObject({ is_live: true, auction_status: null, ocd_make_name: 'Porsche', ocd_model_name: '911', local: '2026-11-25T19:00:00' });
    expect((row.auction_end_at as Date).toISOString()).toBe('2026-11-26T03:00:00.000Z');
  });

  it('fires bid.created once per bid identity, ever (repeat polls, bid edits, retention)', async () => {
    const id = nextId();
    const mark = await settledMark();
    await send(observation(id, { bid_count: 2 }, [bid(`${id}-b1`, 1000), bid(`${id}-b2`, 2000, '2026-11-21T12:00:10')]));
    const first = await eventsSince(mark);
    const rowId = await auctionId(id);
    expect(first.map((e) => e.envelope.type)).toEqual(['auction.created', 'bid.created', 'bid.created']);
    const bidEvent = first[1];
    expect(bidEvent.routingKey).toBe('bid.created');
    expect(bidEvent.routing).toEqual({ make: 'Porsche', source: 'bringatrailer', auction_id: rowId });
    const data = bidEvent.envelope.data as BidEventData;
    expect(Object.keys(data)).toEqual(['bid']);
    expect(Object.keys(data.bid).sort()).toEqual(['amount', 'auction_id', 'bid_at', 'currency', 'id']);
    const [stored] = await dataSource.query(`SELECT id::text AS id FROM bids WHERE source_bid_id = $1`, [`${id}-b1`]);
    expect(data.bid).toEqual({ id: stored.id, auction_id: rowId, amount: 1000, currency: 'USD', bid_at: '2026-11-21T11:59:40' });

    // Repeated poll, and an update of an existing bid: no second bid.created.
    let m = await settledMark();
    await send(observation(id, { bid_count: 2 }, [bid(`${id}-b1`, 1100), bid(`${id}-b2`, 2000, '2026-11-21T12:00:10')]));
    expect(await eventsSince(m)).toEqual([]);
    const [edited] = await dataSource.query(`SELECT amount::int AS amount FROM bids WHERE source_bid_id = $1`, [`${id}-b1`]);
    expect(edited.amount).toBe(1100);

    // Retention removed the bid rows; the identities remain: still no second bid.created.
    await dataSource.query(`DELETE FROM bids WHERE auction_id = $1`, [rowId]);
    m = await settledMark();
    await send(observation(id, { bid_count: 2 }, [bid(`${id}-b1`, 1100), bid(`${id}-b2`, 2000, '2026-11-21T12:00:10')]));
    expect(await eventsSince(m)).toEqual([]);

    // A new bid is still new.
    m = await settledMark();
    await send(observation(id, { bid_count: 3 }, [bid(`${id}-b3`, 3000)]));
    const later = await eventsSince(m);
    expect(later.map((e) => e.envelope.type)).toEqual(['auction.updated', 'bid.created']);
    const [counts] = await dataSource.query(`SELECT bid_count, unique_bidder_count FROM auctions WHERE id = $1`, [rowId]);
    expect(counts).toEqual({ bid_count: 3, unique_bidder_count: 3 });
  });

  it('fires auction.updated with {before, after} for meaningful fields only', async () => {
    const id = nextId();
    await send(observation(id, { price: 100000 }));
    const rowId = await auctionId(id);
    let mark = await settledMark();
    await send(observation(id, { price: 100000, views: 99999, watches: 999, likes: 99, comments: 500 }));
    expect(await eventsSince(mark)).toEqual([]);

    mark = await settledMark();
    await send(observation(id, { price: 120000, title: '1967 Porsche 911S', bid_count: 40, views: 5 }));
    const received = await eventsSince(mark);
    expect(received).toHaveLength(1);
    expect(received[0].envelope.type).toBe('auction.updated');
    const data = received[0].envelope.data as AuctionEventData;
    expect(data.auction).toMatchObject({ id: rowId, price: 120000, title: '1967 Porsche 911S', bid_count: 40 });
    expect(data.changes).toEqual({
      price: { before: 100000, after: 120000 },
      title: { before: '1967 Porsche 911S Coupe', after: '1967 Porsche 911S' },
      bid_count: { before: 31, after: 40 },
    });
  });

  it('active → sold fires auction.ended instead of auction.updated (and no second updated)', async () => {
    const id = nextId();
    await send(observation(id, { status: 'active' }));
    const mark = await settledMark();
    await send(observation(id, { status: 'sold', price: 150000, price_type: 'sale' }));
    const received = await eventsSince(mark);
    expect(received.map((e) => e.envelope.type)).toEqual(['auction.ended']);
    expect((received[0].envelope.data as AuctionEventData).changes).toEqual({
      status: { before: 'active', after: 'sold' },
      price: { before: 145000, after: 150000 },
      price_type: { before: 'bid', after: 'sale' },
    });
    const [row] = await dataSource.query(`SELECT is_live, auction_status FROM auctions WHERE source_auction_id = $1`, [id]);
    expect(row).toEqual({ is_live: false, auction_status: 'sold' });
  });

  it('coming soon → reserve not met on a high-bid-only source ends the auction with REST status "bid to"', async () => {
    const id = nextId();
    await send(observation(id, { status: 'coming soon' }));
    const mark = await settledMark();
    await send(observation(id, { status: 'reserve not met' }));
    expect((await eventsSince(mark)).map((e) => e.envelope.type)).toEqual(['auction.ended']);
    const [row] = await dataSource.query(`SELECT auction_status FROM auctions WHERE source_auction_id = $1`, [id]);
    expect(row.auction_status).toBe('bid to');
  });

  it('a change reverted within one transaction fires nothing; initial vs final state decide', async () => {
    const id = nextId();
    await send(observation(id, { price: 100000 }));
    const mark = await settledMark();
    const result = await processor.processBatch([
      observation(id, { price: 110000, status: 'sold' }),
      observation(id, { price: 100000, status: 'active' }),
    ] as never);
    expect(result).toMatchObject({ accepted: 2, events: 0, rejected: [] });
    expect(await eventsSince(mark)).toEqual([]);

    // In one batch: created, then changed → only auction.created with the final state.
    const other = nextId();
    const m2 = await settledMark();
    await processor.processBatch([observation(other, { price: 1 }), observation(other, { price: 2, status: 'sold' })] as never);
    const received = await eventsSince(m2);
    expect(received.map((e) => e.envelope.type)).toEqual(['auction.created']);
    expect((received[0].envelope.data as AuctionEventData).auction).toMatchObject({ price: 2, status: 'sold' });
  });

  it('passing the scheduled end time fires nothing', async () => {
    // The processor's clock is given (`now`; nothing else it decides on reads a clock): the
    // same listing observed one second before its end, then one second after it.
    const id = nextId();
    const end = DateTime.fromISO('2026-12-01T19:00:00', { zone: 'America/Los_Angeles' });
    const auction_end_at = end.toFormat("yyyy-MM-dd'T'HH:mm:ss");
    const first = await processor.processBatch([observation(id, { auction_end_at })] as never, { now: end.minus({ seconds: 1 }).toJSDate() });
    expect(first).toMatchObject({ accepted: 1, auctionsCreated: 1, events: 1, rejected: [] });
    const mark = await settledMark();
    const second = await processor.processBatch([observation(id, { auction_end_at })] as never, { now: end.plus({ seconds: 1 }).toJSDate() });
    expect(second).toMatchObject({ accepted: 1, auctionsCreated: 0, auctionsUpdated: 0, events: 0, rejected: [] });
    expect(await eventsSince(mark)).toEqual([]);
  });

  it('keeps a bids-only observation pending until its parent arrives, then fires its events', async () => {
    const id = nextId();
    const mark = await settledMark();
    await send({ source: 'bringatrailer', source_auction_id: id, observed_at: observedAt(), bids: [bid(`${id}-b1`, 500)] });
    expect(await eventsSince(mark)).toEqual([]);
    const pending = await dataSource.query(`SELECT reason FROM pending_observations WHERE source_auction_id = $1`, [id]);
    expect(pending).toEqual([{ reason: 'parent auction not stored' }]);

    const m2 = await settledMark();
    await send(observation(id));
    const received = await eventsSince(m2);
    expect(received.map((e) => e.envelope.type)).toEqual(['auction.created', 'bid.created']);
    const rowId = await auctionId(id);
    expect((received[1].envelope.data as BidEventData).bid.auction_id).toBe(rowId);
    expect(await dataSource.query(`SELECT 1 FROM pending_observations WHERE source_auction_id = $1`, [id])).toEqual([]);
  });

  it('stores auctions ending before 2016 and their bids without any event', async () => {
    const id = nextId();
    const mark = await settledMark();
    await send(observation(id, { status: 'sold', auction_end_at: '2015-12-31T18:00:00' }, [bid(`${id}-b1`, 100, '2015-12-30T10:00:00')]));
    await send(observation(id, { status: 'sold', price: 1, auction_end_at: '2015-12-31T18:00:00' }, [bid(`${id}-b2`, 200, '2015-12-31T10:00:00')]));
    expect(await eventsSince(mark)).toEqual([]);
    const [row] = await dataSource.query(
      `SELECT a.price::int AS price, (SELECT count(*)::int FROM bids b WHERE b.auction_id = a.id) AS bids FROM auctions a WHERE source_auction_id = $1`,
      [id],
    );
    expect(row).toEqual({ price: 1, bids: 2 });
  });

  it('an old bid timestamp alone does not make a bid ineligible', async () => {
    const id = nextId();
    const mark = await settledMark();
    await send(observation(id, {}, [bid(`${id}-b1`, 100, '2014-01-01T10:00:00')]));
    expect((await eventsSince(mark)).map((e) => e.envelope.type)).toEqual(['auction.created', 'bid.created']);
  });

  it('dead-letters malformed observations with the reason and keeps consuming', async () => {
    const before = harness.deadLetters.length;
    const id = nextId();
    const mark = await settledMark();
    await send(
      'this is not json',
      { source: 'bringatrailer', observed_at: observedAt() },
      observation(nextId(), { year: 'sixty-seven' }),
      observation(nextId(), { auction_end_at: '2026-02-30T10:00:00' }),
      observation(nextId(), { title: 'NUL \u0000 inside' }),
      observation(id),
    );
    await harness.waitFor(() => harness.deadLetters.length >= before + 5, 10000, 'dead letters');
    const letters = harness.deadLetters.slice(before);
    const reasons = letters.map((l) => String(l.headers[ObservationHeaders.RejectionReason]));
    expect(reasons[0]).toMatch(/^malformed JSON/);
    expect(reasons.some((r) => r.includes('source_auction_id'))).toBe(true);
    expect(reasons.some((r) => r.includes('auction.year'))).toBe(true);
    expect(reasons.some((r) => r.includes('invalid date-time'))).toBe(true);
    // Refused by the database (valid JSON and DTO): isolated from its batch, rejected alone.
    expect(reasons.some((r) => r.startsWith('the observation could not be applied'))).toBe(true);
    expect(letters[0].body).toBe('this is not json');
    const received = await eventsSince(mark);
    expect(received.map((e) => e.envelope.type)).toEqual(['auction.created']);
    expect(await dataSource.query(`SELECT 1 FROM auctions WHERE source_auction_id = $1`, [id])).toHaveLength(1);
  });

  it('keeps the original message id, timestamp and headers on a dead letter', async () => {
    const before = harness.deadLetters.length;
    await harness.publishWith('{"not": "an observation"}', {
      messageId: 'obs-original-42',
      timestamp: 1764000000,
      headers: { 'x-trace-id': 'trace-abc' },
    });
    await harness.waitFor(() => harness.deadLetters.length > before, 10000, 'the dead letter');
    const letter = harness.deadLetters[before];
    expect(letter).toMatchObject({ body: '{"not": "an observation"}', messageId: 'obs-original-42', timestamp: 1764000000 });
    expect(letter.headers).toMatchObject({ 'x-trace-id': 'trace-abc', [ObservationHeaders.RejectionReason]: expect.any(String) });
  });

  it('normalization changes (alias maintenance, normalize:rebuild) fire nothing', async () => {
    const id = nextId();
    const mark = await settledMark();
    await send(observation(id, { make: 'Zuffenhausen Motorwerke', model: '911S' }));
    const created = await eventsSince(mark);
    expect(created.map((e) => e.routing.make)).toEqual([null]);

    const m2 = await settledMark();
    const alias = await normalization.setAlias('zuffenhausen motorwerke', 'porsche');
    expect(alias).toMatchObject({ make: 'Porsche', make_created: false, auctions_updated: 1 });
    const [{ n: auctions }] = await dataSource.query(`SELECT count(*)::int AS n FROM auctions`);
    const rebuilt = await normalization.rebuild({ batchSize: 7 });
    // Every auction once, in batches of 7 (ids in numeric order, across digit counts); setAlias
    // already renamed the one auction it concerns, so none changes.
    expect(rebuilt).toMatchObject({ scanned: auctions, batches: Math.ceil(auctions / 7), updated: 0 });
    // Re-observing the same listing after the alias: only the normalized names differ.
    await send(observation(id, { make: 'Zuffenhausen Motorwerke', model: '911S' }));
    expect(await eventsSince(m2)).toEqual([]);
    const [row] = await dataSource.query(`SELECT ocd_make_name, ocd_model_name FROM auctions WHERE source_auction_id = $1`, [id]);
    expect(row).toEqual({ ocd_make_name: 'Porsche', ocd_model_name: '911' });

    // The next real change carries the canonical make in its routing context.
    const m3 = await settledMark();
    await send(observation(id, { make: 'Zuffenhausen Motorwerke', model: '911S', price: 1 }));
    expect((await eventsSince(m3)).map((e) => [e.envelope.type, e.routing.make])).toEqual([['auction.updated', 'Porsche']]);
  });

  it('an unknown canonical make is refused unless --create', async () => {
    await expect(normalization.setAlias('xyz', 'No Such Make')).rejects.toThrow('unknown make');
  });

  it('suppresses the events of confirmed exclusions (rows still stored)', async () => {
    await normalization.exclude('Petroliana');
    const id = nextId();
    const mark = await settledMark();
    await send(observation(id, { make: 'petroliana', title: 'Gas pump sign' }, [bid(`${id}-b1`, 5)]));
    await send(observation(id, { make: 'petroliana', title: 'Gas pump sign', price: 10 }));
    expect(await eventsSince(mark)).toEqual([]);
    expect(await dataSource.query(`SELECT 1 FROM auctions WHERE source_auction_id = $1`, [id])).toHaveLength(1);
  });

  it('a stale observation (older than the stored one) does not roll the auction back', async () => {
    const id = nextId();
    const older = observation(id, { price: 1 });
    const newer = observation(id, { price: 2 });
    await send(newer);
    const mark = await settledMark();
    await send(older);
    expect(await eventsSince(mark)).toEqual([]);
    const [row] = await dataSource.query(`SELECT price::int AS price FROM auctions WHERE source_auction_id = $1`, [id]);
    expect(row.price).toBe(2);
  });

  it('adds every new description token to the keyword vocabulary once, whichever process writes it', async () => {
    const counts = async (...tokens: string[]) =>
      (await dataSource.query(
        `SELECT token, count(*)::int AS n FROM description_tokens WHERE token = ANY($1) GROUP BY token ORDER BY token`,
        [tokens],
      )) as { token: string; n: number }[];
    const id = nextId('voc');
    await processor.processBatch([observation(id, { description: 'Zanzibarine  Qwertyblue, twice.' })] as never);
    expect(await counts('Zanzibarine', 'Qwertyblue,', 'twice.', '')).toEqual([
      { token: 'Qwertyblue,', n: 1 },
      { token: 'Zanzibarine', n: 1 },
      { token: 'twice.', n: 1 },
    ]);
    // A second process (nothing remembered) and an update to new words: only new tokens are added.
    const other = new ObservationProcessor(dataSource);
    await other.processBatch([observation(id, { description: 'Zanzibarine Qwertyblue, repainted Quokkaline.' })] as never);
    expect(await counts('Zanzibarine', 'Qwertyblue,', 'repainted', 'Quokkaline.')).toEqual([
      { token: 'Quokkaline.', n: 1 },
      { token: 'Qwertyblue,', n: 1 },
      { token: 'Zanzibarine', n: 1 },
      { token: 'repainted', n: 1 },
    ]);
  });

  it('relays consecutive events of one type in one message, routing key = their type, in seq order', async () => {
    const id = nextId();
    const mark = await settledMark();
    await send(observation(id, { bid_count: 3 }, [bid(`${id}-b1`, 1000), bid(`${id}-b2`, 2000), bid(`${id}-b3`, 3000)]));
    const received = await eventsSince(mark);
    expect(received.map((e) => [e.envelope.type, e.routingKey, e.eventsInMessage])).toEqual([
      ['auction.created', 'auction.created', 1],
      ['bid.created', 'bid.created', 3],
      ['bid.created', 'bid.created', 3],
      ['bid.created', 'bid.created', 3],
    ]);
    const seqs = received.map((e) => BigInt(e.seq));
    expect(seqs).toEqual([...seqs].sort((a, b) => (a < b ? -1 : 1)));
    expect(received[1].headers).toMatchObject({ [EventHeaders.Count]: 3, [EventHeaders.Seq]: received[1].seq });
    expect(received[1].messageId).toBeUndefined();
  });

  it('relays one message per event with eventsPerMessage 1: messageId = envelope id, routing context and seq in headers', async () => {
    const mark = await settledMark();
    await relay.stop();
    const single = new RmqEventPublisher(harnessUrl, { eventsPerMessage: 1 });
    await single.ready();
    const singleRelay = new OutboxRelay(dataSource, single, { listenUrl: database.url, pollIntervalMs: 500 });
    await singleRelay.start();
    try {
      const id = nextId();
      await send(observation(id, { bid_count: 1 }, [bid(`${id}-b1`, 1000)]));
      const received = await eventsSince(mark);
      const rowId = await auctionId(id);
      expect(received.map((e) => [e.envelope.type, e.routingKey, e.eventsInMessage])).toEqual([
        ['auction.created', 'auction.created', 1],
        ['bid.created', 'bid.created', 1],
      ]);
      for (const event of received) {
        expect(event.messageId).toBe(event.envelope.id);
        expect(event.routing).toEqual({ make: 'Porsche', source: 'bringatrailer', auction_id: rowId });
        expect(event.headers[EventHeaders.Count]).toBeUndefined();
        const [stored] = await dataSource.query(`SELECT seq::text AS seq FROM events WHERE id = $1`, [event.envelope.id]);
        expect(event.seq).toBe(stored.seq);
      }
    } finally {
      await singleRelay.stop();
      await single.close();
      await relay.start();
    }
  });

  it('takes an array of observations in one message; an invalid element is dead-lettered alone, the others applied', async () => {
    const [first, second] = [nextId(), nextId()];
    const invalid = { source: 'bringatrailer', source_auction_id: nextId(), observed_at: observedAt(), auction: { year: 'sixty-seven' } };
    const before = harness.deadLetters.length;
    const mark = await settledMark();
    await harness.publishWith(JSON.stringify([observation(first), invalid, observation(second)]), { messageId: 'page-1' });
    await harness.waitFor(() => harness.deadLetters.length > before, 10000, 'the dead letter');
    const received = await eventsSince(mark);
    expect(received.map((e) => [e.envelope.type, (e.envelope.data as AuctionEventData).auction.id])).toEqual([
      ['auction.created', await auctionId(first)],
      ['auction.created', await auctionId(second)],
    ]);
    const letters = harness.deadLetters.slice(before);
    expect(letters).toHaveLength(1);
    expect(JSON.parse(letters[0].body)).toEqual(invalid);
    expect(letters[0]).toMatchObject({ messageId: 'page-1' });
    expect(letters[0].headers).toMatchObject({
      [ObservationHeaders.Index]: 1,
      [ObservationHeaders.RejectionReason]: expect.stringMatching(/auction\.year/),
    });
  });

  it('several relays publish every event exactly once (FOR UPDATE SKIP LOCKED)', async () => {
    await consumer.stop();
    await relay.stop();
    const published: string[] = [];
    const sink = { publish: async (events: { id: string; body: string }[]) => void published.push(...events.map((e) => JSON.parse(e.body).id)) };
    const ids = Array.from({ length: 300 }, () => nextId('r'));
    for (let i = 0; i < ids.length; i += 50) await processor.processBatch(ids.slice(i, i + 50).map((id) => observation(id)) as never);
    // The 300 auction.created events, and any event the stopped relay had not yet published.
    const waiting: string[] = (await dataSource.query(`SELECT id FROM events WHERE published_at IS NULL`)).map((r: { id: string }) => r.id);
    const created: { n: number }[] = await dataSource.query(
      `SELECT count(*)::int AS n FROM events e JOIN auctions a ON a.id = e.auction_id
       WHERE e.published_at IS NULL AND e.type = 'auction.created' AND a.source_auction_id = ANY($1)`,
      [ids],
    );
    expect(created).toEqual([{ n: 300 }]);
    const relays = [0, 1, 2].map(() => new OutboxRelay(dataSource, sink as never, { batchSize: 20 }));
    await Promise.all(relays.map(async (r) => { while ((await r.relayOnce()) > 0) { /* drain */ } }));
    expect(published.length).toBe(waiting.length);
    expect([...published].sort()).toEqual([...waiting].sort());
    const [{ left }] = await dataSource.query(`SELECT count(*)::int AS left FROM events WHERE published_at IS NULL`);
    expect(left).toBe(0);
    await relay.start();
    await consumer.start();
  });
});
