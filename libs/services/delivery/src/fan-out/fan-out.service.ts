import { Inject, Injectable, Logger } from '@nestjs/common';
import { errorMessage } from '@cars/contracts';
import { DELIVERY_OPTIONS, ResolvedDeliveryOptions } from '../config/delivery.options';
import { ClaimedDelivery, DeliveryStore, Holdings } from '../dispatch/delivery-store';

/** Who takes new deliveries straight from the fan-out: what it has room for, and the claims themselves. */
export interface FanOutTaker {
  room(): { total: number; held: Holdings } | null;
  take(claimed: ClaimedDelivery[]): void;
}

/**
 * Runs fan-out passes: one at a time per process, again at once when woken during a pass (a
 * wake-up is never lost). `pass()` resolves when a pass that started after the call has finished —
 * what the RabbitMQ intake waits for before it acks. New deliveries the taker (the dispatcher) has
 * room for come back claimed and go to it at once; the rest wait for a claim.
 */
@Injectable()
export class FanOutService {
  private readonly logger = new Logger('FanOut');
  private running: Promise<void> | null = null;
  private again = false;
  private waiters: (() => void)[] = [];
  private listeners: ((deliveries: number) => void)[] = [];
  private taker: FanOutTaker | null = null;

  constructor(
    private readonly store: DeliveryStore,
    @Inject(DELIVERY_OPTIONS) private readonly options: ResolvedDeliveryOptions,
  ) {}

  takenBy(taker: FanOutTaker): void {
    this.taker = taker;
  }

  /** Called with the number of deliveries a pass created and left to a claim (the dispatcher wakes on it). */
  onDeliveries(listener: (deliveries: number) => void): void {
    this.listeners.push(listener);
  }

  /** A pass covering everything stored before this call. */
  pass(): Promise<void> {
    const done = new Promise<void>((resolve) => this.waiters.push(resolve));
    this.wake();
    return done;
  }

  wake(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => (this.running = null));
  }

  /** Waits for the pass in progress (a clean stop). */
  async idle(): Promise<void> {
    await this.running;
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      const waiting = this.waiters;
      this.waiters = [];
      try {
        let unclaimed = 0;
        for (;;) {
          const { events, deliveries, claimed } = await this.store.fanOut(this.options.fanOutBatchSize, this.taker?.room() ?? null);
          if (claimed.length > 0) this.taker?.take(claimed);
          unclaimed += deliveries - claimed.length;
          if (events < this.options.fanOutBatchSize) break;
        }
        if (unclaimed > 0) for (const listener of this.listeners) listener(unclaimed);
        for (const resolve of waiting) resolve();
      } catch (error) {
        // The events stay unmarked: the next wake-up or sweep takes them again.
        this.logger.warn(`fan-out failed, retried at the next wake-up: ${errorMessage(error)}`);
        this.waiters.unshift(...waiting);
        this.again = false;
        return;
      }
    } while (this.again);
  }
}
