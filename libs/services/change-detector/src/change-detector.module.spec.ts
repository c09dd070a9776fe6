import { Provider } from '@nestjs/common';
import { ChangeDetectorModule } from './change-detector.module';
import { CHANGE_DETECTOR_OPTIONS, ChangeDetectorModuleOptions, OBSERVATION_CONSUMER_OPTIONS } from './change-detector.options';
import { ObservationConsumer } from './consumer/observation.consumer';
import { OUTBOX_RELAY_OPTIONS, OutboxRelay } from './outbox/outbox.relay';
import { RmqEventPublisher } from './outbox/event-publisher';
import { PENDING_REPLAYER_OPTIONS, PendingReplayer } from './pending/pending-replayer';

const providers = (options?: ChangeDetectorModuleOptions): Provider[] => ChangeDetectorModule.forRoot(options).providers ?? [];
const token = (provider: Provider) => (typeof provider === 'function' ? provider : provider.provide);
const valueOf = (options: ChangeDetectorModuleOptions, key: symbol): unknown => {
  const found = providers(options).find((p) => token(p) === key);
  return found && typeof found !== 'function' && 'useValue' in found ? found.useValue : undefined;
};

describe('ChangeDetectorModule.forRoot', () => {
  it.each([
    { name: 'no broker: the pending replay only', options: {}, parts: [PendingReplayer] },
    { name: 'no broker, replay off: nothing runs', options: { pendingReplay: false as const }, parts: [] },
    {
      name: 'a broker: replay, relay and consumer',
      options: { rabbitmqUrl: 'amqp://broker' },
      parts: [PendingReplayer, RmqEventPublisher, OutboxRelay, ObservationConsumer],
    },
    {
      name: 'the relay role: no consumer, no replay',
      options: { rabbitmqUrl: 'amqp://broker', consumer: false as const, pendingReplay: false as const },
      parts: [RmqEventPublisher, OutboxRelay],
    },
    {
      name: 'the consumer role: no relay, no publisher',
      options: { rabbitmqUrl: 'amqp://broker', relay: false as const },
      parts: [PendingReplayer, ObservationConsumer],
    },
  ])('$name', ({ options, parts }) => {
    const tokens = providers(options).map(token);
    const runnable = [PendingReplayer, RmqEventPublisher, OutboxRelay, ObservationConsumer];
    expect(runnable.filter((part) => tokens.includes(part))).toEqual(parts);
    expect(valueOf(options, CHANGE_DETECTOR_OPTIONS)).toBe(options);
  });

  it('hands each part its options, with the LISTEN and broker URLs', () => {
    const options: ChangeDetectorModuleOptions = {
      rabbitmqUrl: 'amqp://broker',
      databaseUrl: 'postgres://db',
      consumer: { batchSize: 10 },
      relay: { pollIntervalMs: 5 },
      pendingReplay: { intervalMs: 7 },
    };
    expect(valueOf(options, PENDING_REPLAYER_OPTIONS)).toEqual({ intervalMs: 7, listenUrl: 'postgres://db' });
    expect(valueOf(options, OUTBOX_RELAY_OPTIONS)).toEqual({ pollIntervalMs: 5, listenUrl: 'postgres://db' });
    expect(valueOf(options, OBSERVATION_CONSUMER_OPTIONS)).toEqual({ batchSize: 10, url: 'amqp://broker' });
  });
});
