import { randomUUID } from 'node:crypto';
import { CustomStrategy, RmqOptions, ServerRMQ } from '@nestjs/microservices';
import type { Channel } from 'amqplib';

/** How long a stopping server waits for its last replies to be written. */
const REPLY_FLUSH_MS = 2000;

/**
 * The RabbitMQ server of an RPC queue, with a clean stop: `close()` first cancels the consumer
 * (the broker sends this replica nothing more; other replicas take the queue), then lets every
 * request already received be answered, then closes the connection. A rolling restart of a
 * service therefore loses no request — with the stock server, requests taken off the queue but
 * not yet answered vanished with the connection and their callers waited out the RPC timeout.
 */
export class DrainingRmqServer extends ServerRMQ {
  private readonly tag: string;
  private consumerChannel?: Channel;
  private inFlight = 0;
  private idle?: () => void;

  constructor(options: RmqOptions['options'] & { queue: string }) {
    const tag = `${options.queue}.${randomUUID()}`;
    super({ ...options, consumerTag: tag });
    this.tag = tag;
  }

  /** Requests received and not answered yet. */
  get pending(): number {
    return this.inFlight;
  }

  override async setupChannel(channel: Channel, callback: () => void): Promise<void> {
    this.consumerChannel = channel;
    await super.setupChannel(channel, callback);
  }

  override async handleMessage(message: Record<string, unknown>, channel: unknown): Promise<void> {
    this.inFlight += 1;
    try {
      await super.handleMessage(message, channel);
    } finally {
      this.inFlight -= 1;
      if (this.inFlight === 0) this.idle?.();
    }
  }

  override async close(): Promise<void> {
    await this.consumerChannel?.cancel(this.tag).catch(() => undefined);
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    // Replies wait in the channel wrapper until written, then until the broker confirms them, and
    // closing the wrapper rejects both kinds: let them go out. (The unconfirmed list has no public
    // accessor in amqp-connection-manager 5.)
    const wrapper = this.channel as { queueLength(): number; _unconfirmedMessages?: unknown[] } | null;
    const unsent = () => (wrapper ? wrapper.queueLength() + (wrapper._unconfirmedMessages?.length ?? 0) : 0);
    // Nest hands a reply to the channel on the next tick after its handler resolved.
    await new Promise((resolve) => setImmediate(resolve));
    const deadline = Date.now() + REPLY_FLUSH_MS;
    while (unsent() > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    await super.close();
  }
}

/** The Nest microservice options of a draining RPC server. */
export function drainingRpcServer(options: RmqOptions): CustomStrategy {
  return { strategy: new DrainingRmqServer(options.options as RmqOptions['options'] & { queue: string }) };
}
