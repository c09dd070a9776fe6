import { Inject, Injectable, Logger } from '@nestjs/common';
import { errorMessage } from '@cars/contracts';
import { DELIVERY_OPTIONS, ResolvedDeliveryOptions } from '../config/delivery.options';
import { ClaimedDelivery, DeliveryStore, Holdings } from '../dispatch/delivery-store';

/** Who takes new deliveries straight from the fan-out: what it has room for, and the claims themselves. */
export interface FanOutTaker {
  room(): { total: number; held: Holdings } | null;
  take(claimed: ClaimedDelivery[]): void;
}

/** Event seqs this process remembers having fanned out (the most recent). */
const FANNED_MEMORY = 50_000;

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
  /** The pass under way (one iteration of the loop), if any: resolves when it ends, committed or failed. */
  private current: Promise<void> | null = null;
  private again = false;
  private waiters: (() => void)[] = [];
  private listeners: ((deliveries: number) => void)[] = [];
  private taker: FanOutTaker | null = null;
  /** Seqs of the events this process's passes marked, oldest first. */
  private readonly fanned = new Set<string>();

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

  /**
   * Whether passes of this process have fanned out every one of these events (by `seq`) — then
   * their deliveries exist and a wake-up for them needs no pass. False for any seq it does not
   * remember (another worker's, or one from before its memory).
   */
  covers(seqs: readonly string[]): boolean {
    return seqs.length > 0 && seqs.every((seq) => this.fanned.has(seq));
  }

  private remember(seqs: readonly string[]): void {
    for (const seq of seqs) this.fanned.add(seq);
    if (this.fanned.size <= FANNED_MEMORY) return;
    let excess = this.fanned.size - FANNED_MEMORY;
    for (const seq of this.fanned) {
      if (excess-- <= 0) break;
      this.fanned.delete(seq);
    }
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

  /** Resolves when the pass under way, if any, has ended (committed or failed). */
  async passUnderWay(): Promise<void> {
    await this.current;
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
      let ended!: () => void;
      this.current = new Promise<void>((resolve) => (ended = resolve));
      try {
        let unclaimed = 0;
        for (;;) {
          const { events, marked, deliveries, claimed } = await this.store.fanOut(this.options.fanOutBatchSize, this.taker?.room() ?? null);
          this.remember(marked);
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
      } finally {
        ended();
        this.current = null;
      }
    } while (this.again);
  }
}
