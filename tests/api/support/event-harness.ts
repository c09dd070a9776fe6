import { AnyEventEnvelope, EventRouting, eventsOfMessage, Exchanges, Queues } from '@cars/contracts';
import { assertEventTopology, assertObservationTopology } from '@cars/messaging';
import { ChannelModel, ConfirmChannel, connect, ConsumeMessage, Options } from 'amqplib';

/** Test support (used by this lib's integration specs only): publish observations, collect events. */
export interface ReceivedEvent {
  envelope: AnyEventEnvelope;
  routingKey: string;
  routing: EventRouting;
  /** The outbox sequence number. */
  seq: string;
  /** Of the message that carried it (one event, or a batch of them). */
  headers: Record<string, unknown>;
  messageId: string | undefined;
  /** How many events that message carried. */
  eventsInMessage: number;
}

export interface DeadLetter {
  body: string;
  headers: Record<string, unknown>;
  messageId: string | undefined;
  timestamp: number | undefined;
}

export class EventHarness {
  readonly events: ReceivedEvent[] = [];
  readonly deadLetters: DeadLetter[] = [];

  private constructor(
    private readonly connection: ChannelModel,
    private readonly channel: ConfirmChannel,
  ) {}

  /** Binds a queue of its own to `auction.events` (`#`) and listens to the dead-letter queue. */
  static async create(url: string, queue = `test.events.${process.pid}.${Date.now()}`): Promise<EventHarness> {
    const connection = await connect(url, { noDelay: true });
    const channel = await connection.createConfirmChannel();
    await assertEventTopology(channel);
    await assertObservationTopology(channel);
    await channel.assertQueue(queue, { durable: true });
    await channel.bindQueue(queue, Exchanges.AuctionEvents, '#');
    const harness = new EventHarness(connection, channel);
    await channel.consume(queue, (message) => message && harness.onEvent(message), { noAck: true });
    await channel.consume(
      Queues.ObservationsDeadLetter,
      (message) =>
        message &&
        harness.deadLetters.push({
          body: message.content.toString('utf8'),
          headers: message.properties.headers ?? {},
          messageId: typeof message.properties.messageId === 'string' ? message.properties.messageId : undefined,
          timestamp: typeof message.properties.timestamp === 'number' ? message.properties.timestamp : undefined,
        }),
      { noAck: true },
    );
    return harness;
  }

  /** One message of `auction.events`: one event, or a batch of them (contracts `eventsOfMessage`). */
  private onEvent(message: ConsumeMessage): void {
    const headers = (message.properties.headers ?? {}) as Record<string, unknown>;
    const items = eventsOfMessage(message.content, headers);
    for (const item of items) {
      this.events.push({
        envelope: item.event,
        routingKey: message.fields.routingKey,
        routing: item.routing,
        seq: item.seq,
        headers,
        messageId: typeof message.properties.messageId === 'string' ? message.properties.messageId : undefined,
        eventsInMessage: items.length,
      });
    }
  }

  /** Publishes observations (objects as JSON, strings as they are) to `observations`, confirmed. */
  async publish(...messages: (object | string)[]): Promise<void> {
    for (const message of messages) {
      const body = typeof message === 'string' ? message : JSON.stringify(message);
      this.channel.sendToQueue(Queues.Observations, Buffer.from(body), { persistent: true, contentType: 'application/json' });
    }
    await this.channel.waitForConfirms();
  }

  /** Publishes one observation body with message properties of its own (id, headers…), confirmed. */
  async publishWith(body: string, properties: Options.Publish): Promise<void> {
    this.channel.sendToQueue(Queues.Observations, Buffer.from(body), { persistent: true, contentType: 'application/json', ...properties });
    await this.channel.waitForConfirms();
  }

  async waitFor<T>(probe: () => T | undefined | false, timeoutMs = 15000, what = 'condition'): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = probe();
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  eventsOf(type: string, auctionId?: string): ReceivedEvent[] {
    return this.events.filter((e) => e.envelope.type === type && (auctionId === undefined || e.routing.auction_id === auctionId));
  }

  async close(): Promise<void> {
    await this.channel.close().catch(() => undefined);
    await this.connection.close().catch(() => undefined);
  }
}
