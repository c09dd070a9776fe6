import type { ObservationConsumerOptions } from './consumer/observation.consumer';
import type { EventPublisherOptions } from './outbox/event-publisher';
import type { OutboxRelayOptions } from './outbox/outbox.relay';
import type { PendingReplayerOptions } from './pending/pending-replayer';

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
  /** The relay, and how many events its messages carry (`eventsPerMessage`). */
  relay?: (Omit<OutboxRelayOptions, 'listenUrl'> & EventPublisherOptions) | false;
  /** Replay of parked observations whose context arrived (on by default, in every mode). */
  pendingReplay?: Omit<PendingReplayerOptions, 'listenUrl'> | false;
}

/** The module's options as given to `forRoot`. */
export const CHANGE_DETECTOR_OPTIONS = Symbol('CHANGE_DETECTOR_OPTIONS');

/** The consumer's options in the module (the module option `consumer`, with the broker URL). */
export const OBSERVATION_CONSUMER_OPTIONS = Symbol('OBSERVATION_CONSUMER_OPTIONS');
