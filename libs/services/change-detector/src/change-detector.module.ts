import { DynamicModule, Module, Provider } from '@nestjs/common';
import { CHANGE_DETECTOR_OPTIONS, ChangeDetectorModuleOptions, OBSERVATION_CONSUMER_OPTIONS } from './change-detector.options';
import { ChangeDetectorRuntime } from './change-detector.runtime';
import { ObservationConsumer, ObservationConsumerOptions } from './consumer/observation.consumer';
import { NormalizationService } from './normalization/normalization.service';
import { ReferenceCache } from './normalization/reference-cache';
import { ChangeDetectorMetrics } from './metrics/change-detector.metrics';
import { KnownDescriptionTokens } from './observations/description-tokens';
import { ObservationProcessor } from './observations/observation.processor';
import { ObservationRepository } from './observations/observation.repository';
import { EVENT_PUBLISHER, EVENT_PUBLISHER_OPTIONS, EVENT_PUBLISHER_URL, EventPublisherOptions, RmqEventPublisher } from './outbox/event-publisher';
import { OUTBOX_RELAY_OPTIONS, OutboxRelay, OutboxRelayOptions } from './outbox/outbox.relay';
import { PENDING_REPLAYER_OPTIONS, PendingReplayer, PendingReplayerOptions } from './pending/pending-replayer';

/**
 * The change-detector service: ingestion, normalization, change detection, outbox relay. Needs a
 * DatabaseModule from its host app (`PG_POOL`); the broker parts are provided only with a
 * RabbitMQ URL, each part only when its option is not `false`.
 */
@Module({})
export class ChangeDetectorModule {
  static forRoot(options: ChangeDetectorModuleOptions = {}): DynamicModule {
    return {
      module: ChangeDetectorModule,
      providers: [
        { provide: CHANGE_DETECTOR_OPTIONS, useValue: options },
        ObservationRepository,
        ReferenceCache,
        KnownDescriptionTokens,
        ObservationProcessor,
        NormalizationService,
        ...pendingReplayProviders(options),
        ...relayProviders(options),
        ...consumerProviders(options),
        ChangeDetectorRuntime,
        ChangeDetectorMetrics,
      ],
      exports: [ObservationProcessor, NormalizationService, ChangeDetectorRuntime],
    };
  }
}

function pendingReplayProviders(options: ChangeDetectorModuleOptions): Provider[] {
  if (options.pendingReplay === false) return [];
  const replay: PendingReplayerOptions = { ...(options.pendingReplay ?? {}), listenUrl: options.databaseUrl };
  return [{ provide: PENDING_REPLAYER_OPTIONS, useValue: replay }, PendingReplayer];
}

function relayProviders(options: ChangeDetectorModuleOptions): Provider[] {
  if (!options.rabbitmqUrl || options.relay === false) return [];
  const { eventsPerMessage, ...relayOptions } = options.relay ?? {};
  const relay: OutboxRelayOptions = { ...relayOptions, listenUrl: options.databaseUrl };
  const publisher: EventPublisherOptions = { eventsPerMessage };
  return [
    { provide: EVENT_PUBLISHER_URL, useValue: options.rabbitmqUrl },
    { provide: EVENT_PUBLISHER_OPTIONS, useValue: publisher },
    RmqEventPublisher,
    { provide: EVENT_PUBLISHER, useExisting: RmqEventPublisher },
    { provide: OUTBOX_RELAY_OPTIONS, useValue: relay },
    OutboxRelay,
  ];
}

function consumerProviders(options: ChangeDetectorModuleOptions): Provider[] {
  if (!options.rabbitmqUrl || options.consumer === false) return [];
  const consumer: ObservationConsumerOptions = { ...(options.consumer ?? {}), url: options.rabbitmqUrl };
  return [
    { provide: OBSERVATION_CONSUMER_OPTIONS, useValue: consumer },
    {
      provide: ObservationConsumer,
      inject: [ObservationProcessor, OBSERVATION_CONSUMER_OPTIONS],
      useFactory: (processor: ObservationProcessor, consumerOptions: ObservationConsumerOptions) =>
        new ObservationConsumer(processor, consumerOptions),
    },
  ];
}
