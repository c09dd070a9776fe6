import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import type { ReadinessProbe } from '@cars/runtime';
import { CHANGE_DETECTOR_OPTIONS, ChangeDetectorModuleOptions } from './change-detector.options';
import { ObservationConsumer } from './consumer/observation.consumer';
import { RmqEventPublisher } from './outbox/event-publisher';
import { OutboxRelay } from './outbox/outbox.relay';
import { PendingReplayer } from './pending/pending-replayer';

/**
 * Starts and stops the pending replay, the relay and the consumer with the application, in that
 * order (and stops the consumer before the relay, so the last batches' events still go out).
 * Each part is provided only when the module's options turn it on.
 */
@Injectable()
export class ChangeDetectorRuntime implements OnApplicationBootstrap, OnApplicationShutdown, ReadinessProbe {
  readonly name = 'broker';
  private readonly logger = new Logger('ChangeDetector');

  constructor(
    @Inject(CHANGE_DETECTOR_OPTIONS) private readonly options: ChangeDetectorModuleOptions,
    @Optional() private readonly replayer?: PendingReplayer,
    @Optional() private readonly publisher?: RmqEventPublisher,
    @Optional() private readonly relay?: OutboxRelay,
    @Optional() private readonly consumer?: ObservationConsumer,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.replayer?.start();
    if (!this.options.rabbitmqUrl) return;
    if (this.relay) {
      await this.publisher?.ready();
      await this.relay.start();
    }
    await this.consumer?.start();
    this.logger.log(`consuming observations: ${this.consumer ? 'yes' : 'no'}; relaying events: ${this.relay ? 'yes' : 'no'}`);
  }

  /** Broker connectivity for readiness. */
  isUp(): boolean {
    return (this.consumer?.isConnected() ?? true) && (this.publisher?.isConnected() ?? true);
  }

  /** Readiness detail: the pending backlog, so an operator sees a stuck one. */
  detail(): Record<string, unknown> {
    return this.replayer ? { pending_observations: this.replayer.current } : {};
  }

  /** The replayer, when running (the quick start's ingestion wakes it; tests wait for it). */
  get pendingReplayer(): PendingReplayer | undefined {
    return this.replayer;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.replayer?.stop();
    await this.consumer?.stop();
    await this.relay?.stop();
    await this.publisher?.close().catch(() => undefined);
  }
}
