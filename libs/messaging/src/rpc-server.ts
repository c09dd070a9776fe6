import { randomUUID } from 'node:crypto';
import { errorMessage, jsonNestingExceeds, MAX_JSON_DEPTH, MAX_RPC_JSON_DEPTH, rpcError, validationError } from '@cars/contracts';
import { CustomStrategy, RmqContext, RmqOptions, ServerRMQ } from '@nestjs/microservices';
import type { AmqpConnectionManager, CreateChannelOpts } from 'amqp-connection-manager';
import type { Channel } from 'amqplib';
import { Logger } from '@nestjs/common';
import { ChannelSupervision, superviseChannel } from './channel-supervision';
import { coalesceConnectionWrites } from './coalesced-writes';

/** How long a stopping server waits for its last replies to be written. */
const REPLY_FLUSH_MS = 2000;

/**
 * The AMQP `type` of a reply whose content is the JSON text a service answered (an ok reply whose
 * value is `JsonText`, the body of the HTTP response), as UTF-8 bytes and nothing else: no
 * envelope, so it is neither escaped into a JSON string by the service nor parsed out of one by
 * the gateway (see RpcClientRmq).
 */
export const JSON_TEXT_REPLY = 'cars.json-text';

/**
 * The AMQP `type` of a request whose client reads JSON_TEXT_REPLY replies (RpcClientRmq sends it:
 * a short-string property, cheaper to write and read than a headers table). Without it (a stock
 * Nest client) the reply is Nest's packet.
 */
export const JSON_TEXT_READER_REQUEST = 'cars.rpc; reads=json-text';

/** The header by which a gateway of the previous release said the same; still honoured during a rolling deploy. */
export const ACCEPTS_JSON_TEXT_HEADER = 'x-accepts-json-text';

function acceptsJsonText(context: RmqContext): boolean {
  const message = context.getMessage() as { properties?: { type?: unknown; headers?: Record<string, unknown> } } | undefined;
  const properties = message?.properties;
  return properties?.type === JSON_TEXT_READER_REQUEST || properties?.headers?.[ACCEPTS_JSON_TEXT_HEADER] === true;
}

/** The value of a final `{ok: true, value}` reply packet when that value is JSON text. */
function jsonTextOf(packet: Record<string, unknown>): string | undefined {
  if (packet.isDisposed !== true || packet.err !== undefined) return undefined;
  const response = packet.response as { ok?: unknown; value?: unknown } | undefined;
  // Every reply type whose value is a string is JsonText (libs/contracts' messages).
  return response?.ok === true && typeof response.value === 'string' ? response.value : undefined;
}

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
  private readonly acknowledged = new WeakSet<object>();
  private supervision?: ChannelSupervision;
  private readonly log = new Logger('RpcServer');

  constructor(options: RmqOptions['options'] & { queue: string }) {
    const tag = `${options.queue}.${randomUUID()}`;
    super({ ...options, consumerTag: tag });
    this.tag = tag;
  }

  /** Requests received and not answered yet. */
  get pending(): number {
    return this.inFlight;
  }

  /**
   * Nest tries `JSON.parse` on every pattern (an object pattern arrives as its JSON text) and
   * catches the SyntaxError a plain string pattern throws: ours are plain strings, so skip the
   * throw (measurable per request).
   */
  protected override getRouteFromPattern(pattern: string): string {
    const first = pattern.charCodeAt(0);
    // '{', '[' or '"': JSON text of a pattern.
    return first === 123 || first === 91 || first === 34 ? super.getRouteFromPattern(pattern) : pattern;
  }

  /**
   * Replies are published without publisher confirms. A request is acknowledged once its reply is
   * published, on the same channel (the consumer's; the wrapper publishes on it at once while
   * connected, else when it is back), and the broker takes a channel's frames in order: an
   * acknowledged request always had its reply handed to the broker, so a confirm per reply bought
   * nothing but a frame each way (measured in tools/bench/rpc; docs/performance.md). A reply the
   * connection drops before that still leaves its request unacknowledged: it is delivered again.
   */
  override createClient<T = AmqpConnectionManager>(): T {
    const client = coalesceConnectionWrites(super.createClient<AmqpConnectionManager>());
    const createChannel = client.createChannel.bind(client);
    client.createChannel = (options?: CreateChannelOpts) => {
      const wrapper = createChannel({ ...options, confirm: false });
      this.supervision = superviseChannel(() => client, wrapper, { label: `RPC server ${this.queue}`, warn: (m) => this.log.warn(m) });
      return wrapper;
    };
    return client as T;
  }

  /**
   * Nest's setup does not await its `consume`: when the channel ends before the broker's
   * consume-ok (a node leaving the cluster closes it with INTERNAL_ERROR), the rejection went
   * unhandled and ended the process. Here it is caught; the channel's supervision renews the
   * connection, which sets the channel up again.
   */
  override async setupChannel(channel: Channel, callback: () => void): Promise<void> {
    this.consumerChannel = channel;
    const consume = channel.consume.bind(channel);
    channel.consume = (...args: Parameters<Channel['consume']>) => {
      const consuming = consume(...args);
      consuming.catch((error: unknown) => this.log.warn(`RPC server ${this.queue}: consume refused (${errorMessage(error)}); the connection is renewed`));
      return consuming;
    };
    await super.setupChannel(channel, callback);
  }

  override async handleMessage(message: Record<string, unknown>, channel: unknown): Promise<void> {
    if (message === null) {
      // The broker cancelled the consumer: the queue is gone (on a cluster, with the node it lived
      // on). A new connection declares it again on a live node and consumes it.
      this.supervision?.renew(`the broker cancelled the consumer of ${this.queue} (its queue was deleted, or its node went away)`);
      return;
    }
    this.inFlight += 1;
    try {
      const content = (message as { content?: unknown } | null)?.content;
      if (content instanceof Uint8Array && jsonNestingExceeds(content, MAX_RPC_JSON_DEPTH)) this.refuseTooDeep(message, channel);
      else await super.handleMessage(message, channel);
    } finally {
      this.inFlight -= 1;
      if (this.inFlight === 0) this.idle?.();
    }
  }

  /**
   * A request nested deeper than any the services take is answered with the service's 400 reply
   * before Nest parses it or a handler (a validator, a serializer) recurses through it; an event
   * so nested is dropped. (JSON.parse itself does not recurse: the packet's id comes from it.)
   */
  private refuseTooDeep(message: Record<string, unknown>, channel: unknown): void {
    const { content, properties } = message as { content: Uint8Array; properties: { replyTo?: string; correlationId?: string } };
    let packet: { id?: unknown; pattern?: unknown } = {};
    try {
      packet = JSON.parse(Buffer.from(content).toString()) as typeof packet;
    } catch {
      // Not JSON either: no id to answer.
    }
    const pattern = typeof packet.pattern === 'string' ? packet.pattern : '';
    const context = new RmqContext([message, channel, pattern]);
    this.logger.warn(`refused a message nested more than ${MAX_RPC_JSON_DEPTH} levels deep (pattern ${pattern.slice(0, 100) || 'unknown'})`);
    if (typeof packet.id !== 'string' || !properties.replyTo) {
      this.acknowledge(context);
      return;
    }
    const why = `The request nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep`;
    const response = rpcError(400, validationError({ body: [why] }, why));
    this.sendMessage({ id: packet.id, response, isDisposed: true }, properties.replyTo, properties.correlationId ?? '', context);
  }

  /**
   * Nest's reply, with the publish's outcome handled: the channel wrapper's `sendToQueue` returns a
   * promise that rejects when the broker connection drops before the reply is written, and the
   * stock server leaves it unhandled — which ends the process (seen when RabbitMQ restarts under
   * load). The caller's request is lost either way (it times out into a 503); the process is not.
   */
  override sendMessage<T>(message: T, replyTo: string, correlationId: string, context: RmqContext): void {
    const outgoing = this.serializer.serialize(message as never) as { options?: Record<string, unknown> } & Record<string, unknown>;
    const { options, ...packet } = outgoing;
    this.onProcessingEndHook?.(this.transportId, context);
    const json = acceptsJsonText(context) ? jsonTextOf(packet) : undefined;
    const content = json === undefined ? Buffer.from(JSON.stringify(packet)) : Buffer.from(json);
    const properties = json === undefined ? { correlationId, ...options } : { correlationId, ...options, type: JSON_TEXT_REPLY };
    const sent = (this.channel as { sendToQueue(queue: string, content: Buffer, options: Record<string, unknown>): Promise<unknown> | boolean })
      .sendToQueue(replyTo, content, properties);
    if (sent instanceof Promise) {
      sent.then(
        () => this.acknowledge(context),
        (error: unknown) => this.logger.warn(`a reply was not delivered (the caller times out): ${errorMessage(error)}`),
      );
    } else {
      this.acknowledge(context);
    }
  }

  /**
   * With manual acknowledgement (`noAck: false`), the request is acknowledged once its reply is
   * out — once, though Nest may publish a request's end in a second packet.
   */
  private acknowledge(context: RmqContext): void {
    if (this.noAck) return;
    const message = context.getMessage() as object;
    if (this.acknowledged.has(message)) return;
    this.acknowledged.add(message);
    try {
      (context.getChannelRef() as Channel).ack(message as never);
    } catch {
      // The channel closed meanwhile: the request comes back and is answered again (read-only).
    }
  }

  override async close(): Promise<void> {
    this.supervision?.stop();
    await this.consumerChannel?.cancel(this.tag).catch(() => undefined);
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    // Replies wait in the channel wrapper until written (while the connection is down, or the
    // socket is full), and closing the wrapper drops them: let them go out.
    const wrapper = this.channel as { queueLength(): number } | null;
    const unsent = () => (wrapper ? wrapper.queueLength() : 0);
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
