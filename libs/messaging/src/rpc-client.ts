import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { ClientRMQ, RmqOptions } from '@nestjs/microservices';
import type { Channel, ConsumeMessage } from 'amqplib';
import type { AmqpConnectionManager } from 'amqp-connection-manager';
import { ChannelSupervision, superviseChannel } from './channel-supervision';
import { coalesceConnectionWrites } from './coalesced-writes';
import { JSON_TEXT_READER_REQUEST, JSON_TEXT_REPLY } from './rpc-server';

/** What a service answered: a reply packet's `response`, or the bytes of a JSON text reply. */
export type RpcAnswer = { kind: 'value'; value: unknown } | { kind: 'json'; bytes: Buffer };

/** The service did not answer within the request's time. */
export class RpcTimeoutError extends Error {
  constructor(pattern: string, ms: number) {
    super(`${pattern}: no reply within ${ms} ms`);
    this.name = 'RpcTimeoutError';
  }
}

/**
 * Nest's RMQ client logs a lost broker connection at error level (two lines: "Disconnected from
 * RMQ. Trying to reconnect." and the broker's reason). The client reconnects by itself and the
 * requests of the gap end with 503 (see tests/api/gateway-broker-drop.e2e-spec.ts), so they are
 * warnings here; nothing else of that client logs at error level.
 */
class BrokerDropWarnings extends Logger {
  override error(message: unknown): void {
    this.warn(message);
  }
}

/**
 * The RabbitMQ client of an RPC queue: Nest's ClientRMQ (connection, reconnection, status, the
 * queue's assertion and the direct reply-to consumer) with a leaner request path, measured in
 * tools/bench/rpc and docs/performance.md:
 *
 * - `request()` is a promise with one timer: no observable, no EventEmitter listener per request
 *   (replies are matched to their request in a Map by correlation id);
 * - a JSON text reply (`JSON_TEXT_REPLY`, see DrainingRmqServer) is handed over as its bytes, not
 *   parsed;
 * - requests are published without publisher confirms: an RPC request is transient (5 s TTL, not
 *   persistent) and its caller's timeout is what covers a lost one, so waiting for the broker's
 *   confirm of each bought nothing but a frame each way; and they are written to the open amqplib
 *   channel directly, without the wrapper's queue and promise per message.
 *
 * The wire format is Nest's: `{pattern, data, id}` in, `{err, response, isDisposed, id}` out, so
 * a stock Nest server still answers it; the JSON text form of a reply is only sent to a request
 * whose `type` is JSON_TEXT_READER_REQUEST, so a stock client (or an older gateway during a rolling
 * deploy) still gets Nest's packet.
 */
export class RpcClientRmq extends ClientRMQ {
  /** Nest's client logs through this; see BrokerDropWarnings. */
  protected override readonly logger: Logger = new BrokerDropWarnings('RpcClient');
  private readonly waiting = new Map<string, (message: ConsumeMessage) => void>();
  /** The wrapper's amqplib channel while it is open: requests are written to it directly. */
  private open?: Channel;
  private supervision?: ChannelSupervision;
  private readonly log = new Logger('RpcClient');

  constructor(options: RmqOptions['options']) {
    super(options ?? {});
  }

  override createClient(): AmqpConnectionManager {
    return coalesceConnectionWrites(super.createClient());
  }

  override createChannel(): Promise<void> {
    return new Promise((resolve) => {
      const wrapper = this.client!.createChannel({
        json: false,
        confirm: false,
        setup: (channel: Channel) => {
          this.open = channel;
          channel.once('close', () => {
            if (this.open === channel) this.open = undefined;
          });
          return this.setupChannel(channel, resolve);
        },
      });
      this.supervision?.stop();
      this.supervision = superviseChannel(() => this.client, wrapper, { label: `RPC client ${this.queue}`, warn: (m) => this.log.warn(m) });
      this.channel = wrapper;
    });
  }

  override async close(): Promise<void> {
    this.supervision?.stop();
    await super.close();
  }

  override async consumeChannel(channel: Channel): Promise<void> {
    // Direct reply-to: replies come on this channel, unacknowledged (the pseudo-queue requires it).
    await channel.consume(
      this.replyQueue,
      (message) => {
        if (message) this.waiting.get(message.properties.correlationId as string)?.(message);
      },
      { noAck: true },
    );
  }

  /** One request: the service's first answer, or a rejection (timeout, broker down, service error). */
  async request(pattern: string, data: unknown, timeoutMs: number): Promise<RpcAnswer> {
    await this.connect();
    const channel = this.channel;
    if (!channel) throw new Error('Not connected to RabbitMQ');
    const id = randomUUID();
    return new Promise<RpcAnswer>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(id);
      };
      const timer = setTimeout(() => {
        done();
        reject(new RpcTimeoutError(pattern, timeoutMs));
      }, timeoutMs);
      this.waiting.set(id, (message) => {
        done();
        if (message.properties.type === JSON_TEXT_REPLY) return resolve({ kind: 'json', bytes: message.content });
        let packet: { err?: unknown; response?: unknown; isDisposed?: boolean };
        try {
          packet = JSON.parse(message.content.toString()) as typeof packet;
        } catch (error) {
          return reject(error);
        }
        if (packet.err !== undefined && packet.err !== null) return reject(packet.err);
        if (!('response' in packet)) return reject(new Error(`${pattern}: the service ended the request without a reply`));
        resolve({ kind: 'value', value: packet.response });
      });
      const content = Buffer.from(JSON.stringify({ pattern, data, id }));
      const properties = { replyTo: this.replyQueue, persistent: false, correlationId: id, type: JSON_TEXT_READER_REQUEST };
      const fail = (error: unknown) => {
        done();
        reject(error);
      };
      // Straight onto the open amqplib channel (amqplib buffers what the socket cannot take yet);
      // while it is being replaced, through the wrapper, which holds the request until then.
      if (this.open) {
        try {
          this.open.sendToQueue(this.queue, content, properties);
        } catch (error) {
          fail(error);
        }
      } else {
        channel.sendToQueue(this.queue, content, properties).catch(fail);
      }
    });
  }
}
