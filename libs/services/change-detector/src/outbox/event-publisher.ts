import { Inject, Injectable, Logger } from '@nestjs/common';
import { EventHeaders, EventRouting, eventRoutingHeaders, Exchanges } from '@cars/contracts';
import { assertEventTopology, ChannelSupervision, namedSocketOptions, superviseChannel } from '@cars/messaging';
import amqp, { AmqpConnectionManager, ChannelWrapper } from 'amqp-connection-manager';
import type { ConfirmChannel } from 'amqplib';

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

/** Where the relay sends events: resolves once every event of the batch is safely accepted. */
export interface EventPublisher {
  publish(events: OutboxEvent[]): Promise<void>;
  close?(): Promise<void>;
}

/** Where the relay publishes (in the module: the RmqEventPublisher). */
export const EVENT_PUBLISHER = Symbol('EVENT_PUBLISHER');

/** The RabbitMQ URL the RmqEventPublisher connects to. */
export const EVENT_PUBLISHER_URL = Symbol('EVENT_PUBLISHER_URL');

/**
 * Publishes to the `auction.events` topic exchange with publisher confirms (see contracts
 * `EventHeaders` for the message format): body = envelope, routing key = event type.
 */
@Injectable()
export class RmqEventPublisher implements EventPublisher {
  private readonly connection: AmqpConnectionManager;
  private readonly channel: ChannelWrapper;
  private readonly supervision: ChannelSupervision;
  private readonly logger = new Logger('EventPublisher');

  constructor(@Inject(EVENT_PUBLISHER_URL) url: string) {
    this.connection = amqp.connect([url], namedSocketOptions('change-detector event-publisher'));
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
   * amqplib writes every frame to the socket on its own (one write per event). Corking the socket
   * to coalesce them was measured and left out: it needs amqplib's untyped socket
   * (`connection.stream`), relies on the timing of its internal frame multiplexer, and only
   * coalesces up to the socket's write high-water mark (16 KiB) unless that is raised too.
   */
  async publish(events: OutboxEvent[]): Promise<void> {
    await Promise.all(
      events.map((event) =>
        this.channel.publish(Exchanges.AuctionEvents, event.type, Buffer.from(event.body), {
          persistent: true,
          contentType: 'application/json',
          messageId: event.id,
          type: event.type,
          timestamp: Math.floor(event.createdAt.getTime() / 1000),
          headers: { ...eventRoutingHeaders(event.routing), [EventHeaders.Seq]: event.seq },
        }),
      ),
    );
  }

  async close(): Promise<void> {
    this.supervision.stop();
    await this.channel.close();
    await this.connection.close();
  }
}
