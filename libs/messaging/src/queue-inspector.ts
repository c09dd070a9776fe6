import { Logger } from '@nestjs/common';
import { Channel, ChannelModel } from 'amqplib';
import { connectToAny } from './broker-urls';

/**
 * How many consumers a queue has, for readiness details (is anyone serving the query queue?).
 * One connection and channel, opened on first use and again after a failure; a passive check
 * never creates or changes a queue. With several brokers, the first that answers.
 */
export class QueueInspector {
  private readonly logger = new Logger('QueueInspector');
  private connecting?: Promise<{ connection: ChannelModel; channel: Channel }>;

  constructor(private readonly url: string) {}

  /** The queue's consumer count, or null when the broker or the queue cannot be reached. */
  async consumers(queue: string): Promise<number | null> {
    try {
      const { channel } = await this.open();
      return (await channel.checkQueue(queue)).consumerCount;
    } catch (error) {
      this.reset();
      this.logger.debug(`cannot inspect ${queue}: ${error instanceof Error ? error.message : String(error)}`);
      return null;
    }
  }

  async close(): Promise<void> {
    const opened = this.connecting;
    this.connecting = undefined;
    if (!opened) return;
    await opened.then(({ connection }) => connection.close()).catch(() => undefined);
  }

  private open(): Promise<{ connection: ChannelModel; channel: Channel }> {
    this.connecting ??= (async () => {
      const connection = await connectToAny(this.url, { clientProperties: { connection_name: 'gateway queue-inspector' } });
      connection.on('error', () => this.reset());
      connection.on('close', () => this.reset());
      const channel = await connection.createChannel();
      // A failed passive check closes the channel: reopen on the next call.
      channel.on('error', () => this.reset());
      channel.on('close', () => this.reset());
      return { connection, channel };
    })();
    return this.connecting;
  }

  private reset(): void {
    const opened = this.connecting;
    this.connecting = undefined;
    void opened?.then(({ connection }) => connection.close()).catch(() => undefined);
  }
}
