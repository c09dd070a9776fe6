import {
  DynamicModule,
  Inject,
  Injectable,
  Logger,
  Module,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import type { ReadinessProbe } from '@cars/runtime';
import { DataSource } from 'typeorm';
import { ObservationConsumer, ObservationConsumerOptions } from './consumer/observation.consumer';
import { NormalizationService } from './normalization/normalization.service';
import { ObservationProcessor } from './observations/observation.processor';
import { RmqEventPublisher } from './outbox/event-publisher';
import { OutboxRelay, OutboxRelayOptions } from './outbox/outbox.relay';
import { PendingReplayer, PendingReplayerOptions } from './pending/pending-replayer';

export interface ChangeDetectorModuleOptions {
  /**
   * With a RabbitMQ URL the module consumes `observations` and relays the outbox to
   * `auction.events`. Without it only the processor and the maintenance service are provided
   * (the quick start drives them in-process).
   */
  rabbitmqUrl?: string;
  /** Connection string for the relay's LISTEN connection (otherwise it polls). */
  databaseUrl?: string;
  consumer?: Omit<ObservationConsumerOptions, 'url'> | false;
  relay?: Omit<OutboxRelayOptions, 'listenUrl'> | false;
  /** Replay of parked observations whose context arrived (on by default, in every mode). */
  pendingReplay?: Omit<PendingReplayerOptions, 'listenUrl'> | false;
}

export const CHANGE_DETECTOR_OPTIONS = Symbol('CHANGE_DETECTOR_OPTIONS');

/** Starts and stops the consumer and the relay with the application. */
@Injectable()
export class ChangeDetectorRuntime implements OnApplicationBootstrap, OnApplicationShutdown, ReadinessProbe {
  readonly name = 'broker';
  private readonly logger = new Logger('ChangeDetector');
  private consumer?: ObservationConsumer;
  private relay?: OutboxRelay;
  private publisher?: RmqEventPublisher;
  private replayer?: PendingReplayer;

  constructor(
    private readonly processor: ObservationProcessor,
    private readonly dataSource: DataSource,
    @Inject(CHANGE_DETECTOR_OPTIONS) private readonly options: ChangeDetectorModuleOptions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.options.pendingReplay !== false) {
      this.replayer = new PendingReplayer(this.processor, {
        ...(this.options.pendingReplay ?? {}),
        listenUrl: this.options.databaseUrl,
      });
      await this.replayer.start();
    }
    const url = this.options.rabbitmqUrl;
    if (!url) return;
    if (this.options.relay !== false) {
      this.publisher = new RmqEventPublisher(url);
      await this.publisher.ready();
      this.relay = new OutboxRelay(this.dataSource, this.publisher, {
        ...(this.options.relay ?? {}),
        listenUrl: this.options.databaseUrl,
      });
      await this.relay.start();
    }
    if (this.options.consumer !== false) {
      this.consumer = new ObservationConsumer(this.processor, { ...(this.options.consumer ?? {}), url });
      await this.consumer.start();
    }
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

/** The change-detector service: ingestion, normalization, change detection, outbox relay. */
@Module({})
export class ChangeDetectorModule {
  static forRoot(options: ChangeDetectorModuleOptions = {}): DynamicModule {
    return {
      module: ChangeDetectorModule,
      providers: [
        { provide: CHANGE_DETECTOR_OPTIONS, useValue: options },
        { provide: ObservationProcessor, useFactory: (db: DataSource) => new ObservationProcessor(db), inject: [DataSource] },
        { provide: NormalizationService, useFactory: (db: DataSource) => new NormalizationService(db), inject: [DataSource] },
        ChangeDetectorRuntime,
      ],
      exports: [ObservationProcessor, NormalizationService, ChangeDetectorRuntime],
    };
  }
}
