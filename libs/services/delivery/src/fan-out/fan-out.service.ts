import { Inject, Injectable, Logger } from '@nestjs/common';
import { errorMessage } from '@cars/contracts';
import { FanOutRepository } from '@cars/webhook-store';
import { DELIVERY_OPTIONS, ResolvedDeliveryOptions } from '../config/delivery.options';

/**
 * Runs fan-out passes: one at a time per process, again at once when woken during a pass (a
 * wake-up is never lost). `pass()` resolves when a pass that started after the call has finished —
 * what the RabbitMQ intake waits for before it acks.
 */
@Injectable()
export class FanOutService {
  private readonly logger = new Logger('FanOut');
  private running: Promise<void> | null = null;
  private again = false;
  private waiters: (() => void)[] = [];
  private listeners: ((deliveries: number) => void)[] = [];

  constructor(
    private readonly repository: FanOutRepository,
    @Inject(DELIVERY_OPTIONS) private readonly options: ResolvedDeliveryOptions,
  ) {}

  /** Called with the number of deliveries a pass created (the dispatcher wakes on it). */
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
        let created = 0;
        for (;;) {
          const { events, deliveries } = await this.repository.fanOutBatch(this.options.fanOutBatchSize);
          created += deliveries;
          if (events < this.options.fanOutBatchSize) break;
        }
        if (created > 0) for (const listener of this.listeners) listener(created);
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
