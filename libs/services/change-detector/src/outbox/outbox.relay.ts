import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { KEYED_LOOKUPS, PG_POOL, PgListener, withTransaction } from '@cars/persistence';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { poolOf } from '../database/pg';
import { EVENT_PUBLISHER, EventPublisher, OutboxEvent } from './event-publisher';
import { errorMessage, NotifyChannels } from '@cars/contracts';
import { backoffDelay } from '@cars/messaging';

export interface OutboxRelayOptions {
  /** Events claimed per transaction. */
  batchSize?: number;
  /** Fallback poll when no notification arrives (LISTEN is the fast path). */
  pollIntervalMs?: number;
  /** A connection string for the LISTEN connection; without it the relay only polls. */
  listenUrl?: string;
}

/**
 * The relay's statements find events by `seq`, through their indexes whatever the planner knows of
 * the table (`KEYED_LOOKUPS`), with plans made once per connection: planned again at every batch,
 * the mark (its custom plan looks cheaper) cost more to plan than to run.
 */
const RELAY_SETTINGS = [KEYED_LOOKUPS, 'plan_cache_mode = force_generic_plan'];

/**
 * The relays' turn (`pg_advisory_xact_lock(int, int)`: the two-key form, a lock space apart from
 * the one-key auction locks of the consumer).
 */
const RELAY_LOCK = [727, 2] as const;

/** The relay's options in the module (the module option `relay`, with the LISTEN URL). */
export const OUTBOX_RELAY_OPTIONS = Symbol('OUTBOX_RELAY_OPTIONS');

/**
 * Publishes unpublished outbox events in `seq` order and marks them published, in one
 * transaction per batch. Relays of several processes take turns (a transaction-scoped advisory
 * lock; the next one reads what the last one left), so events go out in `seq` order, and a crash
 * between publish and commit republishes with the same event ids (at least once). The event rows
 * are locked only by the closing UPDATE, for the moment before the commit. Woken by `NOTIFY auction_events_outbox` (`NotifyChannels.AuctionEventsOutbox`) after each commit that wrote events,
 * with a slow poll as a safety net.
 */
@Injectable()
export class OutboxRelay {
  private readonly logger = new Logger(OutboxRelay.name);
  private readonly pool: Pool;
  private readonly batchSize: number;
  private readonly pollIntervalMs: number;
  private listener?: PgListener;
  private timer?: NodeJS.Timeout;
  private running = false;
  private again = false;
  private stopped = true;
  private idle: Promise<void> = Promise.resolve();
  private failures = 0;

  constructor(
    @Inject(PG_POOL) database: Pool | DataSource,
    @Inject(EVENT_PUBLISHER) private readonly publisher: EventPublisher,
    @Optional() @Inject(OUTBOX_RELAY_OPTIONS) private readonly options: OutboxRelayOptions = {},
  ) {
    this.pool = poolOf(database);
    this.batchSize = options.batchSize ?? 1000;
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
  }

  async start(): Promise<void> {
    this.stopped = false;
    if (this.options.listenUrl) {
      this.listener = new PgListener({
        url: this.options.listenUrl,
        channels: [NotifyChannels.AuctionEventsOutbox],
        applicationName: 'outbox-relay-listen',
        onNotification: () => this.wake(),
        // Notifications sent while the connection was down are lost: look at once.
        onListening: () => this.wake(),
        onError: (message) => this.logger.warn(`outbox ${message}`),
      });
      await this.listener.start();
    }
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.listener?.stop();
    this.listener = undefined;
    await this.idle;
  }

  /** Publishes what is waiting now; resolves when the outbox was empty at some point. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.idle = this.drain().finally(() => {
      this.running = false;
      if (this.again && !this.stopped) {
        this.again = false;
        this.wake();
      }
    });
  }

  /** Publishes one batch; returns how many events went out. */
  async relayOnce(): Promise<number> {
    return withTransaction(this.pool, async (client) => {
      // One relay at a time, by a lock of its own rather than the event rows' locks: the delivery
      // worker's fan-out claims the same rows (FOR UPDATE SKIP LOCKED), and rows held here for
      // the broker's confirms would make it pass them by and wait for the next wake-up.
      await client.query({ name: 'relay_turn', text: `SELECT pg_advisory_xact_lock($1, $2)`, values: [...RELAY_LOCK] });
      // payload is `json`: its text is the envelope exactly as written, published as is.
      const { rows } = await client.query<{
        seq: string;
        id: string;
        type: string;
        created_at: Date;
        body: string;
        make: string | null;
        source: string | null;
        auction_id: string | null;
      }>({
        name: 'relay_claim',
        text: `
          SELECT e.seq::text AS seq, e.id, e.type, e.created_at, e.payload::text AS body,
                 e.make, e.source, e.auction_id::text AS auction_id
          FROM events e WHERE e.published_at IS NULL
          ORDER BY e.seq LIMIT $1`,
        values: [this.batchSize],
      });
      if (rows.length === 0) return 0;
      const events: OutboxEvent[] = rows.map((row) => ({
        seq: row.seq,
        id: row.id,
        type: row.type,
        createdAt: row.created_at,
        body: row.body,
        routing: { make: row.make, source: row.source, auction_id: row.auction_id },
      }));
      await this.publisher.publish(events);
      await client.query({
        name: 'relay_mark',
        text: `UPDATE events SET published_at = now() WHERE seq = ANY($1::bigint[])`,
        values: [rows.map((r) => r.seq)],
      });
      return rows.length;
    }, { settings: RELAY_SETTINGS });
  }

  private async drain(): Promise<void> {
    try {
      while (!this.stopped && (await this.relayOnce()) >= this.batchSize) {
        // a full batch: there may be more
      }
      this.failures = 0;
      this.schedule(this.pollIntervalMs);
    } catch (error) {
      this.failures += 1;
      const delay = backoffDelay(this.failures, { baseMs: 500, maxMs: 30_000 });
      this.logger.warn(`outbox relay failed (${errorMessage(error)}); retry in ${delay} ms`);
      this.schedule(delay);
    }
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    this.timer = setTimeout(() => this.wake(), delayMs);
    this.timer.unref?.();
  }
}
