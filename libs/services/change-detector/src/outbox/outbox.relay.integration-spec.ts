import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { createDataSource } from '@cars/persistence';
import { adminQuery, createIsolatedDatabase } from '@cars/testing';
import { DataSource } from 'typeorm';
import { EventPublisher, OutboxEvent } from './event-publisher';
import { OutboxRelay } from './outbox.relay';

/** The relay's LISTEN connection, as pg_stat_activity names it. */
const LISTEN_APP = 'outbox-relay-listen';
/** Far beyond every wait here: what these specs see published went out on a notification. */
const POLL_MS = 600_000;

/** Collects what the relay publishes. */
class Sink implements EventPublisher {
  readonly ids: string[] = [];
  async publish(events: OutboxEvent[]): Promise<void> {
    this.ids.push(...events.map((e) => e.id));
  }
}

/**
 * The relay's wake-ups over a database of its own (its LISTEN connection is cut by application
 * name, which no other spec may share): a notification at commit, the LISTEN connection coming
 * back after the server cuts it (and the relay looking at once, since notifications sent
 * meanwhile are lost), and a stop that leaves no connection.
 */
describe('OutboxRelay wake-ups (LISTEN through PgListener)', () => {
  let database: { url: string; drop: () => Promise<void> };
  let db: DataSource;
  let relay: OutboxRelay | undefined;

  beforeAll(async () => {
    database = await createIsolatedDatabase('outbox_relay');
    db = await createDataSource({ url: database.url, poolSize: 4 }).initialize();
  }, 60_000);

  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
    await db.query(`TRUNCATE events`);
  });

  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  const insertEvent = async (): Promise<string> => {
    const id = `evt_${randomUUID()}`;
    await db.query(`INSERT INTO events (id, type, api_version, created_at, payload) VALUES ($1, 'auction.created', 'v1', now(), '{}')`, [id]);
    return id;
  };
  const listenBackends = async (): Promise<number[]> =>
    (await db.query(`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`, [LISTEN_APP])).map(
      (r: { pid: number }) => r.pid,
    );
  const until = async (what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  it('publishes an event on its notification, long before the poll', async () => {
    const sink = new Sink();
    const first = await insertEvent();
    relay = new OutboxRelay(db, sink, { listenUrl: database.url, pollIntervalMs: POLL_MS });
    await relay.start();
    await until('the first event (the start looks once)', () => sink.ids.length === 1);
    const second = await insertEvent();
    await until('the notified event', () => sink.ids.length === 2);
    expect(sink.ids).toEqual([first, second]);
  });

  it('leaves the event rows unlocked while the broker confirms, and relays of two processes take turns', async () => {
    const ids = [await insertEvent(), await insertEvent()];
    let release!: () => void;
    const confirmed = new Promise<void>((resolve) => (release = resolve));
    const held: string[] = [];
    const slow: EventPublisher = {
      publish: async (events) => {
        held.push(...events.map((e) => e.id));
        await confirmed;
      },
    };
    const first = new OutboxRelay(db, slow, { pollIntervalMs: POLL_MS });
    const second = new OutboxRelay(db, new Sink(), { pollIntervalMs: POLL_MS });
    const publishing = first.relayOnce();
    let waiting: Promise<number> | undefined;
    try {
      await until('the first relay publishing', () => held.length === 2);
      // What the delivery worker's fan-out does: claim the unfanned rows, passing by locked ones.
      const claimable = await db.query(`SELECT id FROM events WHERE fanned_out_at IS NULL ORDER BY seq FOR UPDATE SKIP LOCKED`);
      expect(claimable.map((r: { id: string }) => r.id)).toEqual(ids);
      // A second relay waits for its turn, then finds nothing left to publish.
      waiting = second.relayOnce();
      const early = await Promise.race([waiting, new Promise((resolve) => setTimeout(() => resolve('waiting'), 200))]);
      expect(early).toBe('waiting');
    } finally {
      // Never leave the first relay's transaction open (the clean-up would wait on it).
      release();
    }
    expect(await publishing).toBe(2);
    expect(await waiting).toBe(0);
  });

  it('listens again after the server cuts its connection, and publishes what was written meanwhile', async () => {
    const sink = new Sink();
    relay = new OutboxRelay(db, sink, { listenUrl: database.url, pollIntervalMs: POLL_MS });
    await relay.start();
    const [before] = await listenBackends();
    expect(before).toBeDefined();

    await db.query(`SELECT pg_terminate_backend($1)`, [before]);
    // Written while no one listens: its notification is lost; the reconnect's look finds it.
    const during = await insertEvent();
    await until('a new LISTEN connection', async () => {
      const now = await listenBackends();
      return now.length === 1 && now[0] !== before;
    });
    await until('the event written during the gap', () => sink.ids.length === 1);
    const after = await insertEvent();
    await until('the event notified on the new connection', () => sink.ids.length === 2);
    expect(sink.ids).toEqual([during, after]);
  });

  it('keeps trying when a reconnect fails, and listens once the database takes connections again', async () => {
    const warnings: string[] = [];
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void warnings.push(String(message)));
    const name = new URL(database.url).pathname.slice(1);
    try {
      const sink = new Sink();
      relay = new OutboxRelay(db, sink, { listenUrl: database.url, pollIntervalMs: POLL_MS });
      await relay.start();
      const [before] = await listenBackends();
      await adminQuery(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
      await db.query(`SELECT pg_terminate_backend($1)`, [before]);
      // The loss, then at least one reconnect refused by the database.
      await until('a failed reconnect', () => warnings.length >= 2);
      expect(warnings.every((w) => /^outbox LISTEN connection lost \(.+\); reconnecting$/.test(w))).toBe(true);
      await adminQuery(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
      await until('a new LISTEN connection', async () => (await listenBackends()).length === 1);
      const id = await insertEvent();
      await until('the notified event', () => sink.ids.length === 1);
      expect(sink.ids).toEqual([id]);
    } finally {
      await adminQuery(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`);
      warn.mockRestore();
    }
  });

  it('stop() leaves no LISTEN connection, and publishes nothing more', async () => {
    const sink = new Sink();
    relay = new OutboxRelay(db, sink, { listenUrl: database.url, pollIntervalMs: POLL_MS });
    await relay.start();
    expect(await listenBackends()).toHaveLength(1);
    await relay.stop();
    expect(await listenBackends()).toEqual([]);
    await insertEvent();
    relay.wake();
    expect(sink.ids).toEqual([]);
  });
});
