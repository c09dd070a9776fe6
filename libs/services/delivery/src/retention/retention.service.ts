import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { errorMessage } from '@cars/contracts';
import { RetentionRepository } from '@cars/webhook-store';
import { DELIVERY_OPTIONS, ResolvedDeliveryOptions } from '../config/delivery.options';

/** Retention: terminal payloads and delivery history are eligible for cleanup after 30 days. */
export const RETENTION_DAYS = 30;
const BATCH = 5_000;

/**
 * Removes, in batches (short transactions, no long locks), deliveries that ended (`succeeded`,
 * `failed`, `canceled`) more than 30 days ago and events older than 30 days that are published
 * and fanned out with no delivery left that needs their payload. `bid_identities` stay: a bid
 * seen again after cleanup is recognised and never fires a second `bid.created`.
 */
@Injectable()
export class RetentionService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Retention');
  private timer?: NodeJS.Timeout;
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly retention: RetentionRepository,
    @Inject(DELIVERY_OPTIONS) private readonly options: ResolvedDeliveryOptions,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running ??= this.run()
        .catch((error: unknown) => this.logger.warn(`retention pass failed, retried later: ${errorMessage(error)}`))
        .finally(() => (this.running = null));
    }, this.options.retentionIntervalMs);
    this.timer.unref();
  }

  /** One pass; returns what it removed. */
  async run(days = RETENTION_DAYS): Promise<{ deliveries: number; events: number }> {
    let deliveries = 0;
    for (;;) {
      const removed = await this.retention.deleteEndedDeliveries(days, BATCH);
      deliveries += removed;
      if (removed < BATCH) break;
    }
    let events = 0;
    for (;;) {
      const removed = await this.retention.deleteSpentEvents(days, BATCH);
      events += removed;
      if (removed < BATCH) break;
    }
    if (deliveries + events > 0) this.logger.log(`removed ${deliveries} deliveries and ${events} events older than ${days} days`);
    return { deliveries, events };
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
