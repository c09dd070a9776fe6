import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { EventRouting, EVENTS_PER_MESSAGE, Exchanges, MAX_EVENT_BATCH_BYTES, MAX_EVENTS_PER_MESSAGE } from '@cars/contracts';
import { assertEventTopology, brokerUrls, ChannelSupervision, logBrokerMoves, namedSocketOptions, superviseChannel } from '@cars/messaging';
import { counter } from '@cars/metrics';
import amqp, { AmqpConnectionManager, ChannelWrapper } from 'amqp-connection-manager';
import type { ConfirmChannel } from 'amqplib';
import { EventPacking, packEvents } from './event-messages';

/** One outbox row on its way to the broker. */
export interface OutboxEvent {
  seq: string;
  /** The envelope's `id`, `type` and `created_at` (message properties). */
  id: string;
  type: string;
  createdAt: Date;
  /** The envelope's JSON text, as the change-detector wrote it: the message body. */
  body: string;
  routing: EventRouting;
}

const publishedMessages = counter({
  name: 'outbox_published_messages_total',
  help: 'Messages the outbox relay published to auction.events and the broker confirmed (one event each, or a batch).',
});
const publishedEvents = counter({
  name: 'outbox_published_events_total',
  help: 'Events the outbox relay published to auction.events and the broker confirmed.',
});

/** Where the relay sends events: resolves once every event of the batch is safely accepted. */
export interface EventPublisher {
  publish(events: OutboxEvent[]): Promise<void>;
  close?(): Promise<void>;
}

/** Where the relay publishes (in the module: the RmqEventPublisher). */
export const EVENT_PUBLISHER = Symbol('EVENT_PUBLISHER');

/** The RabbitMQ URL the RmqEventPublisher connects to. */
export const EVENT_PUBLISHER_URL = Symbol('EVENT_PUBLISHER_URL');

/** The RmqEventPublisher's options (the module's `relay.eventsPerMessage`). */
export const EVENT_PUBLISHER_OPTIONS = Symbol('EVENT_PUBLISHER_OPTIONS');

export interface EventPublisherOptions {
  /**
   * Events per message at most (default `EVENTS_PER_MESSAGE`, at most `MAX_EVENTS_PER_MESSAGE`);
   * 1 publishes one message per event (the single-event form of contracts `EventHeaders`).
   */
  eventsPerMessage?: number;
}

/**
 * Publishes to the `auction.events` topic exchange with publisher confirms (see contracts
 * `EventHeaders` and `EventBatchItem` for the message format): consecutive events of one type
 * share a message, routing key = event type, in `seq` order (`packEvents`).
 */
@Injectable()
export class RmqEventPublisher implements EventPublisher {
  private readonly connection: AmqpConnectionManager;
  private readonly channel: ChannelWrapper;
  private readonly supervision: ChannelSupervision;
  private readonly logger = new Logger('EventPublisher');
  private readonly packing: EventPacking;

  constructor(@Inject(EVENT_PUBLISHER_URL) url: string, @Optional() @Inject(EVENT_PUBLISHER_OPTIONS) options: EventPublisherOptions = {}) {
    const maxEvents = options.eventsPerMessage ?? EVENTS_PER_MESSAGE;
    if (!Number.isInteger(maxEvents) || maxEvents < 1 || maxEvents > MAX_EVENTS_PER_MESSAGE) {
      throw new Error(`eventsPerMessage must be an integer from 1 to ${MAX_EVENTS_PER_MESSAGE} (got ${maxEvents})`);
    }
    this.packing = { maxEvents, maxBytes: MAX_EVENT_BATCH_BYTES };
    this.connection = amqp.connect(brokerUrls(url), namedSocketOptions('change-detector event-publisher'));
    logBrokerMoves(this.connection, 'event publisher', this.logger);
    this.channel = this.connection.createChannel({
      confirm: true,
      publishTimeout: 30000,
      setup: (channel: ConfirmChannel) => assertEventTopology(channel),
    });
    this.supervision = superviseChannel(() => this.connection, this.channel, { label: 'event publisher', warn: (m) => this.logger.warn(m) });
  }

  async ready(): Promise<void> {
    await this.channel.waitForConnect();
  }

  isConnected(): boolean {
    return this.connection.isConnected();
  }

  /**
   * amqplib writes every frame to the socket on its own (one write per message). Corking the
   * socket to coalesce them was measured and left out: it needs amqplib's untyped socket
   * (`connection.stream`), relies on the timing of its internal frame multiplexer, and only
   * coalesces up to the socket's write high-water mark (16 KiB) unless that is raised too.
   * Batch messages made it moot: a relay batch is a few messages.
   */
  async publish(events: OutboxEvent[]): Promise<void> {
    const messages = packEvents(events, this.packing);
    await Promise.all(
      messages.map((message) =>
        this.channel.publish(Exchanges.AuctionEvents, message.type, message.body, {
          persistent: true,
          contentType: 'application/json',
          messageId: message.messageId,
          type: message.type,
          timestamp: message.timestamp,
          headers: message.headers,
        }),
      ),
    );
    publishedMessages.inc(messages.length);
    publishedEvents.inc(events.length);
  }

  async close(): Promise<void> {
    this.supervision.stop();
    await this.channel.close();
    await this.connection.close();
  }
}
