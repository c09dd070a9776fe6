import 'reflect-metadata';
import { AuctionEventData, BidEventData } from '@cars/contracts';
import { createDataSource } from '@cars/persistence';
import { createIsolatedDatabase, createVhost, deleteVhost } from '@cars/testing';
import { NormalizationService } from '@cars/service-change-detector';
import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { EventHarness, ReceivedEvent } from './support/event-harness';

/**
 * Crash safety of the real process: the change-detector app (compiled, `npm test` builds it) is
 * killed with SIGKILL in the middle of a stream and restarted. Every observation's events must
 * come out, at least once, and a duplicate must carry the same event id.
 */
jest.setTimeout(120000);

const MAIN = join(__dirname, '../../dist/apps/change-detector/src/main.js');
const AUCTIONS = 300;

let database: { url: string; drop: () => Promise<void> };
let vhost: string;
let url: string;
let dataSource: DataSource;
let harness: EventHarness;
let child: ChildProcess | undefined;

function startDetector(): ChildProcess {
  const proc = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      DATABASE_URL: database.url,
      RABBITMQ_URL: url,
      HEALTH_PORT: '0',
      LOG_LEVEL: 'error',
      OBSERVATION_BATCH_SIZE: '25',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  proc.stderr?.on('data', (chunk: Buffer) => process.stderr.write(`[change-detector] ${chunk.toString()}`));
  return proc;
}

async function kill(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGKILL');
  await exited;
}

beforeAll(async () => {
  database = await createIsolatedDatabase('cd_crash');
  vhost = `${process.env.TEST_RUN_ID}_cd_crash`;
  url = createVhost(vhost);
  dataSource = await createDataSource({ url: database.url, poolSize: 2 }).initialize();
  await new NormalizationService(dataSource).loadReference();
  harness = await EventHarness.create(url);
});

afterAll(async () => {
  if (child) await kill(child);
  await harness?.close();
  await dataSource?.destroy();
  deleteVhost(vhost);
  await database?.drop();
});

const logicalKey = (event: ReceivedEvent): string =>
  event.envelope.type === 'bid.created'
    ? `bid:${(event.envelope.data as BidEventData).bid.id}`
    : `${event.envelope.type}:${(event.envelope.data as AuctionEventData).auction.id}`;

it('publishes every event of every observation after a SIGKILL mid-stream, duplicates keeping their id', async () => {
  let clock = Date.parse('2026-11-21T12:00:00Z');
  const at = () => new Date((clock += 1000)).toISOString();
  const auction = (i: number, price: number) => ({
    source: 'carsandbids',
    source_auction_id: `crash-${i}`,
    observed_at: at(),
    auction: { status: 'active', title: `Car ${i}`, price, currency: 'USD', year: 1990, make: 'BMW', model: 'M3', auction_end_at: '2026-12-01T12:00:00' },
    bids: [
      { source_bid_id: `crash-${i}-1`, bidder_name: 'a', amount: price - 100, currency: 'USD', bid_at: '2026-11-20T10:00:00' },
      { source_bid_id: `crash-${i}-2`, bidder_name: 'b', amount: price, currency: 'USD', bid_at: '2026-11-20T11:00:00' },
    ],
  });
  const messages = [
    ...Array.from({ length: AUCTIONS }, (_, i) => auction(i, 10000)),
    ...Array.from({ length: AUCTIONS }, (_, i) => auction(i, 20000)),
  ];
  const expected = AUCTIONS * 4; // created + 2 × bid.created + updated

  child = startDetector();
  await harness.publish(...messages);
  await harness.waitFor(() => harness.events.length >= 200, 30000, 'the first events');
  await kill(child);
  const beforeRestart = harness.events.length;
  expect(beforeRestart).toBeLessThan(expected);

  child = startDetector();
  await harness.waitFor(() => new Set(harness.events.map(logicalKey)).size >= expected, 60000, 'every event after the restart');
  await new Promise((resolve) => setTimeout(resolve, 500));

  const ids = new Map<string, Set<string>>();
  for (const event of harness.events) {
    const key = logicalKey(event);
    if (!ids.has(key)) ids.set(key, new Set());
    ids.get(key)!.add(event.envelope.id);
  }
  expect(ids.size).toBe(expected);
  for (const [key, set] of ids) expect([key, set.size]).toEqual([key, 1]);
  const counts = harness.events.reduce<Record<string, number>>((acc, e) => ({ ...acc, [e.envelope.type]: (acc[e.envelope.type] ?? 0) + 1 }), {});
  expect(Object.keys(counts).sort()).toEqual(['auction.created', 'auction.updated', 'bid.created']);
  const [{ unpublished }] = await dataSource.query(`SELECT count(*)::int AS unpublished FROM events WHERE published_at IS NULL`);
  expect(unpublished).toBe(0);
  const [{ total }] = await dataSource.query(`SELECT count(*)::int AS total FROM events`);
  expect(total).toBe(expected);
});
