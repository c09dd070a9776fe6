import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { errorMessage, NotifyChannels, parseAccountChange } from '@cars/contracts';
import { PgListener } from '@cars/persistence';
import type { ReadinessProbe } from '@cars/runtime';
import { DELIVERY_OPTIONS, ResolvedDeliveryOptions } from '../config/delivery.options';
import { Dispatcher } from '../dispatch/dispatcher.service';
import { DeliveryStore } from '../dispatch/delivery-store';
import { FanOutService } from '../fan-out/fan-out.service';


/**
 * What keeps the worker moving: notifications at commit (new events → fan-out; new deliveries and
 * retries → dispatch; an account change → its allowance waits re-checked at once; make
 * maintenance → make waits decided), and a sweep
 * every `sweepIntervalMs` that does all of it regardless (a lost notification only delays), plus
 * the recovery of attempts whose lease expired.
 */
@Injectable()
export class DeliveryWakeup implements OnApplicationBootstrap, BeforeApplicationShutdown, ReadinessProbe {
  readonly name = 'wakeups';
  private readonly logger = new Logger('DeliveryWakeup');
  private listener?: PgListener;
  private timer?: NodeJS.Timeout;
  private sweeping: Promise<void> | null = null;

  constructor(
    private readonly fanOut: FanOutService,
    private readonly dispatcher: Dispatcher,
    private readonly store: DeliveryStore,
    @Inject(DELIVERY_OPTIONS) private readonly options: ResolvedDeliveryOptions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.fanOut.takenBy(this.dispatcher);
    this.fanOut.onDeliveries(() => this.dispatcher.wake());
    this.listener = new PgListener({
      url: this.options.databaseUrl,
      channels: [NotifyChannels.DeliveryWakeup, NotifyChannels.AccountChanges, NotifyChannels.ReferenceChanges],
      applicationName: 'delivery-wakeup',
      onNotification: (channel, payload) => this.notified(channel, payload),
      onListening: () => this.sweep(),
      onError: (message) => this.logger.warn(`wake-up connection: ${message}; the sweep keeps deliveries moving`),
    });
    await this.listener.start();
    this.timer = setInterval(() => this.sweep(), this.options.sweepIntervalMs);
    this.timer.unref();
    this.sweep();
  }

  isUp(): boolean {
    return this.listener?.listening ?? false;
  }

  private notified(channel: string, payload: string): void {
    if (channel === NotifyChannels.ReferenceChanges) {
      void this.store
        .resolveMakeWaits()
        .then(({ released }) => released > 0 && this.dispatcher.wake())
        .catch((error: unknown) => this.logger.warn(`make waits: ${errorMessage(error)}`));
    } else if (channel === NotifyChannels.AccountChanges) {
      void this.store
        .releaseAllowanceWaits(parseAccountChange(payload)?.accountId)
        .then((released) => released > 0 && this.dispatcher.wake())
        .catch((error: unknown) => this.logger.warn(`allowance check failed: ${errorMessage(error)}`));
    } else if (payload === 'events') {
      this.fanOut.wake();
    } else {
      this.dispatcher.wake();
    }
  }

  /** One sweep at a time: expired leases, allowance waits, fan-out, dispatch. */
  sweep(): void {
    this.sweeping ??= (async () => {
      try {
        await this.store.recoverExpired();
        await this.store.releaseAllowanceWaits();
        await this.store.resolveMakeWaits();
      } catch (error) {
        this.logger.warn(`delivery sweep failed, retried next interval: ${errorMessage(error)}`);
      }
      this.fanOut.wake();
      this.dispatcher.wake();
    })().finally(() => (this.sweeping = null));
  }

  /** Before the pools close: no new claims, and every attempt in flight recorded. */
  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.listener?.stop();
    await this.sweeping;
    await this.dispatcher.drain();
    await this.fanOut.idle();
  }
}
