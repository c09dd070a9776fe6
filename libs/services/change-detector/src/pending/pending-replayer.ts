import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { PgListener } from '@cars/persistence';
import { ObservationProcessor } from '../observations/observation.processor';
import { PendingSummary } from '../observations/observation.repository';
import { errorMessage, NotifyChannels } from '@cars/contracts';


export interface PendingReplayerOptions {
  /** LISTEN for reference changes on this connection string (without it only the backstop runs). */
  listenUrl?: string;
  /** Backstop: replay whatever became ready this often (ms). */
  intervalMs?: number;
  /** A backlog whose oldest observation waits longer than this is logged as stuck (ms). */
  stuckAfterMs?: number;
}

/** The replayer's options in the module (the module option `pendingReplay`, with the LISTEN URL). */
export const PENDING_REPLAYER_OPTIONS = Symbol('PENDING_REPLAYER_OPTIONS');

export interface PendingBacklog {
  count: number;
  oldest_received_at: string | null;
  oldest_age_seconds: number | null;
  by_reason: Record<string, number>;
}

/** The backlog as operators read it (admin `pending:show`, the readiness detail). */
export function describeBacklog(summary: PendingSummary, now = Date.now()): PendingBacklog {
  const oldest = summary.oldestReceivedAt;
  return {
    count: summary.count,
    oldest_received_at: oldest ? oldest.toISOString() : null,
    oldest_age_seconds: oldest ? Math.max(0, Math.round((now - oldest.getTime()) / 1000)) : null,
    by_reason: summary.byReason,
  };
}

/**
 * An observation waits (pending, never dropped) only while its context is missing. Parked
 * observations go on by themselves when their context arrives: at once when reference data
 * changes (NOTIFY from the database), after each applied batch that stored new auctions (the
 * consumer calls `wake`), and on a periodic backstop that also reports a stuck backlog.
 */
@Injectable()
export class PendingReplayer {
  private readonly logger = new Logger('PendingObservations');
  private listener?: PgListener;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  private backlog: PendingBacklog = { count: 0, oldest_received_at: null, oldest_age_seconds: null, by_reason: {} };

  constructor(
    private readonly processor: ObservationProcessor,
    @Optional() @Inject(PENDING_REPLAYER_OPTIONS) private readonly options: PendingReplayerOptions = {},
  ) {}

  async start(): Promise<void> {
    if (this.options.listenUrl) {
      this.listener = new PgListener({
        url: this.options.listenUrl,
        channels: [NotifyChannels.ReferenceChanges],
        applicationName: 'pending-replay-listen',
        onNotification: () => this.wake(),
        onListening: () => this.wake(),
        onError: (message) => this.logger.warn(message),
      });
      await this.listener.start();
    }
    this.timer = setInterval(() => this.wake(true), this.options.intervalMs ?? 30_000);
    this.timer.unref?.();
    this.wake(true);
  }

  /** Replays what is ready now (coalesced: one run at a time, one more if woken meanwhile). */
  wake(report = false): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.run(report).finally(() => {
      this.running = undefined;
      if (this.again && !this.stopped) {
        this.again = false;
        this.wake();
      }
    });
  }

  /** Resolves when no replay is running (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** The backlog as of the last run. */
  get current(): PendingBacklog {
    return this.backlog;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.listener?.stop();
    await this.idle();
  }

  private async run(report: boolean): Promise<void> {
    try {
      const result = await this.processor.replayReady();
      const applied = result.auctionsCreated + result.auctionsUpdated + result.bidsCreated;
      if (applied > 0) {
        this.logger.log(
          `replayed pending observations: ${result.auctionsCreated} auctions created, ${result.auctionsUpdated} updated, ` +
            `${result.bidsCreated} bids, ${result.events} events`,
        );
      }
      this.backlog = describeBacklog(await this.processor.pendingSummary());
      const stuckAfter = (this.options.stuckAfterMs ?? 600_000) / 1000;
      if (report && this.backlog.count > 0 && (this.backlog.oldest_age_seconds ?? 0) > stuckAfter) {
        this.logger.warn(
          `${this.backlog.count} observations pending, the oldest for ${this.backlog.oldest_age_seconds} s ` +
            `(${Object.entries(this.backlog.by_reason).map(([reason, n]) => `${n} ${reason}`).join(', ')}); ` +
            'see `npm run admin -- pending:show`',
        );
      }
    } catch (error) {
      this.logger.warn(`pending replay failed (${errorMessage(error)}); the backstop retries`);
    }
  }
}
