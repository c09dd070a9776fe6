import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { ageSeconds, gauge } from '@cars/metrics';
import { PG_POOL } from '@cars/persistence';
import { Pool } from 'pg';
import { CHANGE_DETECTOR_OPTIONS, ChangeDetectorModuleOptions } from '../change-detector.options';

/** Reads run once per scrape (prom-client collects gauges concurrently). */
let readOutbox: (() => Promise<void>) | undefined;
let readPending: (() => Promise<void>) | undefined;

/** A database that cannot answer keeps the last figures; readiness reports the database itself. */
const quietly = (read: (() => Promise<void>) | undefined) => async (): Promise<void> => {
  await read?.().catch(() => undefined);
};

const outboxLag = gauge({
  name: 'outbox_oldest_unpublished_event_age_seconds',
  help: 'Age of the oldest event written and not yet published to the broker (0 when none): the outbox relay’s lag.',
  collect: () => quietly(readOutbox)(),
});

const outboxUnpublished = gauge({
  name: 'outbox_unpublished_events',
  help: 'Events written and not yet published to the broker.',
  collect: () => quietly(readOutbox)(),
});

const pendingObservations = gauge({
  name: 'pending_observations',
  help: 'Observations parked until their context exists (a parent auction, a known source), by reason.',
  labelNames: ['reason'] as const,
  collect: () => quietly(readPending)(),
});

const pendingOldest = gauge({
  name: 'pending_observations_oldest_age_seconds',
  help: 'Age of the oldest parked observation (0 when none).',
  collect: () => quietly(readPending)(),
});

/** One in-flight read shared by the gauges that show its figures. */
function once(read: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => (running ??= read().finally(() => (running = undefined)));
}

/**
 * The change-detector's backlogs, read from the database at scrape time: the outbox where this
 * process relays it (a quick start without a broker publishes nothing, and its outbox is no lag),
 * and the parked observations always.
 */
@Injectable()
export class ChangeDetectorMetrics implements OnModuleInit {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(CHANGE_DETECTOR_OPTIONS) private readonly options: ChangeDetectorModuleOptions,
  ) {}

  onModuleInit(): void {
    if (this.options.rabbitmqUrl && this.options.relay !== false) readOutbox = once(() => this.readOutbox());
    readPending = once(() => this.readPending());
  }

  private async readOutbox(): Promise<void> {
    const { rows } = await this.pool.query<{ oldest: Date | null; n: number; now: Date }>(
      `SELECT (SELECT created_at FROM events WHERE published_at IS NULL ORDER BY seq LIMIT 1) AS oldest,
              (SELECT count(*)::int FROM events WHERE published_at IS NULL) AS n, now() AS now`,
    );
    outboxLag.set(ageSeconds(rows[0].oldest, rows[0].now));
    outboxUnpublished.set(rows[0].n);
  }

  private async readPending(): Promise<void> {
    const { rows } = await this.pool.query<{ reason: string; n: number; oldest: Date; now: Date }>(
      `SELECT reason, count(*)::int AS n, min(received_at) AS oldest, now() AS now FROM pending_observations GROUP BY reason`,
    );
    pendingObservations.reset();
    let oldest: Date | null = null;
    let now = new Date();
    for (const row of rows) {
      pendingObservations.set({ reason: row.reason }, row.n);
      if (!oldest || row.oldest < oldest) oldest = row.oldest;
      now = row.now;
    }
    pendingOldest.set(ageSeconds(oldest, now));
  }
}
