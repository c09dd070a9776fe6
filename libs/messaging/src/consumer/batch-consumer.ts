import { Logger } from '@nestjs/common';
import { errorMessage } from '@cars/contracts';
import amqp, { AmqpConnectionManager, ChannelWrapper } from 'amqp-connection-manager';
import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { backoffDelay } from '../backoff';
import { brokerUrls, logBrokerMoves } from '../broker-urls';
import { ChannelSupervision, superviseChannel } from '../channel-supervision';
import { namedSocketOptions } from '../rmq.options';
import { consumerMetrics } from './consumer.metrics';
import { AckTrackers } from './ack-tracker';

/**
 * A message its handler refuses for good, and why. A message may be refused in parts (one
 * element of a batch message): each part is its own dead letter with its own `content`, and the
 * message counts as refused once.
 */
export interface DeadLetter {
  message: ConsumeMessage;
  reason: string;
  /** The body to dead-letter instead of the message's own (the refused part of it). */
  content?: Buffer;
  /** Headers added to the dead letter besides the reason (e.g. where the part was in the message). */
  headers?: Record<string, unknown>;
}

/** What a handler decided about its batch: every message not dead-lettered is acknowledged. */
export interface BatchOutcome {
  deadLetters?: readonly DeadLetter[];
  /**
   * Runs once the dead letters are published, just before the acknowledgements; skipped when
   * publishing them failed (those messages come back). A throw is logged and acks go out anyway.
   */
  beforeAck?: () => Promise<void>;
}

export interface BatchContext {
  /**
   * Aborted by `stop()`. A handler whose work is safe to redo may give up then and throw: its
   * batch is requeued at once instead of holding up the stop.
   */
  signal: AbortSignal;
}

/**
 * Handles one batch: resolves once its effects are durable (the batch is then settled), throws
 * when none of them took effect (the whole batch is then requeued after a backoff).
 */
export type BatchHandler = (messages: readonly ConsumeMessage[], context: BatchContext) => Promise<BatchOutcome | void>;

/** Where refused messages go: published with their original properties plus the reason. */
export interface DeadLetterOptions {
  queue: string;
  /** Header carrying the reason (cut to 2000 characters). */
  reasonHeader: string;
  /** Header carrying the ISO 8601 time of rejection. */
  rejectedAtHeader?: string;
}

/** The part of an amqp-connection-manager connection the consumer uses. */
export type ConsumerConnection = Pick<AmqpConnectionManager, 'createChannel' | 'isConnected' | 'close' | 'on' | 'reconnect'>;

export interface BatchConsumerOptions {
  /** Logger context. */
  name: string;
  url: string;
  queue: string;
  /** Declares what the channels rely on; runs on every (re)connect of each channel, before consuming. */
  topology: (channel: ConfirmChannel) => Promise<unknown>;
  handle: BatchHandler;
  /** Messages per batch (default 100), or their total weight when `weigh` is given. */
  batchSize?: number;
  /**
   * A message's share of `batchSize` (default 1 each), e.g. the items a batch message carries: a
   * batch takes messages until their weights reach `batchSize` (at least one message). Called
   * once per delivery; must not throw. The unacknowledged weight is bounded too: see
   * `prefetchWeight`.
   */
  weigh?: (message: ConsumeMessage) => number;
  /**
   * With `weigh`: about how much weight may wait unacknowledged (default batchSize × (concurrency
   * + 1)). The consumer's prefetch follows the average weight of the messages seen — starting as
   * if each weighed a whole batch — between concurrency + 1 and `prefetch` messages, so a queue of
   * heavy messages is not all taken into memory at once.
   */
  prefetchWeight?: number;
  /**
   * How long a lone message waits for company before its batch starts. Default 0: no window — a
   * batch starts on the next turn of the event loop with what has arrived, and batches grow by
   * themselves while every slot is busy (load), so nothing waits when the consumer is idle.
   */
  maxWaitMs?: number;
  /** Batches in flight at once (default 1). */
  concurrency?: number;
  /**
   * The weight that must be waiting before a batch starts beside small ones already in flight
   * (default 0: any). Each batch has a cost of its own (a transaction, its round trips) besides
   * its messages': at a steady moderate rate, two small batches at once cost more than one twice
   * their size and make both wait for the same cores, while a backlog or heavy messages still get
   * every slot. Beside a batch weighing this much or more (it takes long) a slot opens for any
   * weight, so a trickle never waits behind a large batch.
   */
  spareSlotWeight?: number;
  /** Unacknowledged messages the broker may hand us. Default: batchSize × (concurrency + 1). */
  prefetch?: number;
  /**
   * Where refused messages are published. Without it they are rejected without requeueing: the
   * broker dead-letters them by the queue's own policy, or drops them.
   */
  deadLetter?: DeadLetterOptions;
  /** The pause before a failed batch is requeued, by consecutive failures (default 400 ms doubling to 10 s). */
  retry?: { baseMs: number; maxMs: number };
  /** Opens the connection. Default: amqp-connection-manager with RMQ_SOCKET_OPTIONS, named `consumer <queue>`. */
  connect?: (url: string) => ConsumerConnection;
}

/** Counters for health and benchmarks. */
export interface ConsumerStats {
  received: number;
  acked: number;
  deadLettered: number;
  batches: number;
}

interface Delivery {
  message: ConsumeMessage;
  channel: ConfirmChannel;
  weight: number;
}

interface Refusal {
  delivery: Delivery;
  reason: string;
  content?: Buffer;
  headers?: Record<string, unknown>;
}

/** The consumer running on a channel: its tag, the prefetch it started with, the one the weights ask for. */
interface Subscription {
  tag: string;
  prefetch: number;
  wanted: number;
  /** A cancel and re-consume is under way. */
  busy: boolean;
}

const MAX_REASON_LENGTH = 2000;

/**
 * Consumes one durable queue in batches: messages are buffered until `batchSize` arrived (or
 * their weights reached it, see `weigh`), a slot
 * is free (on the next turn of the event loop), or `maxWaitMs` passed when one is set; up to `concurrency` batches run at once, and a batch is acknowledged after
 * its handler resolved. Messages the handler refuses are published to the dead-letter queue with
 * the reason in a header and acknowledged, so they never block the queue. When the handler throws
 * (its database is down) the whole batch goes back to the queue after a pause. Acknowledgements
 * go out as one `basic.ack` with `multiple` per settled batch (see `settle`), nacks one by one.
 * `stop()` stops taking batches, lets those in flight finish and closes; messages not settled by
 * then return to the queue. `start()` may follow a `stop()`.
 */
export class BatchConsumer {
  readonly stats: ConsumerStats = { received: 0, acked: 0, deadLettered: 0, batches: 0 };
  private readonly logger: Logger;
  private readonly batchSize: number;
  private readonly maxWaitMs: number;
  private readonly concurrency: number;
  private readonly spareSlotWeight: number;
  private readonly prefetch: number;
  private readonly retry: { baseMs: number; maxMs: number };
  private connection?: ConsumerConnection;
  private consumeChannel?: ChannelWrapper;
  private readonly supervisions: ChannelSupervision[] = [];
  private publishChannel?: ChannelWrapper;
  private buffer: Delivery[] = [];
  /** Total weight of `buffer`. */
  private buffered = 0;
  private timer?: NodeJS.Timeout | NodeJS.Immediate;
  private inFlight = 0;
  /** Batches in flight that weigh `spareSlotWeight` or more. */
  private heavyInFlight = 0;
  /** Callers of `stop()` waiting for the batches in flight. */
  private readonly drainWaiters: (() => void)[] = [];
  private stopping = false;
  private stopped = new AbortController();
  private failures = 0;
  /** With `weigh`: the average weight of the messages seen; the consumer on each channel and its prefetch. */
  private averageWeight: number;
  private readonly subscriptions = new WeakMap<ConfirmChannel, Subscription>();
  /** Outstanding delivery tags per channel, so a settled batch costs one `basic.ack` with `multiple`. */
  private readonly acks = new AckTrackers<ConfirmChannel, ConsumeMessage>();

  constructor(private readonly options: BatchConsumerOptions) {
    this.logger = new Logger(options.name);
    this.batchSize = options.batchSize ?? 100;
    this.maxWaitMs = options.maxWaitMs ?? 0;
    this.concurrency = options.concurrency ?? 1;
    this.spareSlotWeight = options.spareSlotWeight ?? 0;
    this.prefetch = options.prefetch ?? this.batchSize * (this.concurrency + 1);
    this.retry = options.retry ?? { baseMs: 400, maxMs: 10_000 };
    this.averageWeight = this.batchSize;
  }

  async start(): Promise<void> {
    this.stopping = false;
    this.stopped = new AbortController();
    const connect = this.options.connect ?? ((url: string) => amqp.connect(brokerUrls(url), namedSocketOptions(`consumer ${this.options.queue}`)));
    this.connection = connect(this.options.url);
    logBrokerMoves(this.connection, this.options.queue, this.logger);
    const topology = async (channel: ConfirmChannel) => {
      await this.options.topology(channel);
    };
    if (this.options.deadLetter) {
      this.publishChannel = this.connection.createChannel({ confirm: true, publishTimeout: 30000, setup: topology });
    }
    this.consumeChannel = this.connection.createChannel({
      confirm: true,
      setup: async (channel: ConfirmChannel) => {
        await topology(channel);
        await this.subscribe(channel, this.options.weigh ? this.weightedPrefetch() : this.prefetch);
      },
    });
    for (const [wrapper, role] of [[this.consumeChannel, 'consume'], [this.publishChannel, 'dead-letter']] as const) {
      if (!wrapper) continue;
      const label = `${this.options.name} ${role} channel`;
      this.supervisions.push(superviseChannel(() => this.connection, wrapper, { label, warn: (m) => this.logger.warn(m) }));
    }
    await this.consumeChannel.waitForConnect();
  }

  isConnected(): boolean {
    return this.connection?.isConnected() ?? false;
  }

  /** Stops consuming, finishes the batches in flight, closes the connection (unacked messages return). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.stopped.abort();
    for (const supervision of this.supervisions.splice(0)) supervision.stop();
    this.clearTimer();
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.drainWaiters.push(resolve));
    this.buffer = [];
    this.buffered = 0;
    await this.consumeChannel?.close().catch(() => undefined);
    await this.publishChannel?.close().catch(() => undefined);
    await this.connection?.close().catch(() => undefined);
    this.consumeChannel = undefined;
    this.publishChannel = undefined;
    this.connection = undefined;
  }

  /**
   * Consumes the queue with a per-consumer prefetch. Quorum queues refuse a channel-wide one
   * (`basic.qos` global closes the connection with NOT_IMPLEMENTED), and a new per-consumer value
   * only applies to consumers started after it: see `resubscribe`.
   */
  private async subscribe(channel: ConfirmChannel, prefetch: number): Promise<void> {
    await channel.prefetch(prefetch);
    const subscription: Subscription = { tag: '', prefetch, wanted: prefetch, busy: false };
    this.subscriptions.set(channel, subscription);
    const { consumerTag } = await channel.consume(this.options.queue, (message) => {
      if (message) this.onDelivery({ message, channel, weight: this.weighed(message, channel) });
    });
    subscription.tag = consumerTag;
  }

  /** A message's weight (1 without `weigh`); with `weigh`, the consumer's prefetch follows the average. */
  private weighed(message: ConsumeMessage, channel: ConfirmChannel): number {
    if (!this.options.weigh) return 1;
    const weight = Math.max(1, this.options.weigh(message));
    this.averageWeight += (weight - this.averageWeight) / 10;
    const subscription = this.subscriptions.get(channel);
    if (subscription) {
      subscription.wanted = this.weightedPrefetch();
      // Only a change by more than a fifth is applied: not a new consumer per message.
      if (Math.abs(subscription.wanted - subscription.prefetch) * 5 > subscription.prefetch) this.resubscribe(channel, subscription);
    }
    return weight;
  }

  /**
   * Applies a new prefetch: the consumer is cancelled and started again with it on the same
   * channel. Messages the old consumer holds stay unacknowledged on the channel and are settled
   * as usual (delivery tags are the channel's); one change at a time, the latest value wins.
   */
  private resubscribe(channel: ConfirmChannel, subscription: Subscription): void {
    if (subscription.busy || this.stopping || !subscription.tag) return;
    subscription.busy = true;
    void (async () => {
      await channel.cancel(subscription.tag);
      if (this.stopping) return;
      await this.subscribe(channel, subscription.wanted);
      const current = this.subscriptions.get(channel);
      if (current && Math.abs(current.wanted - current.prefetch) * 5 > current.prefetch) this.resubscribe(channel, current);
    })()
      .catch((error: unknown) => this.logger.warn(`prefetch not changed: ${errorMessage(error)}`))
      .finally(() => {
        subscription.busy = false;
      });
  }

  /** Messages the channel may hold: `prefetchWeight` over the average weight, within its bounds. */
  private weightedPrefetch(): number {
    const target = this.options.prefetchWeight ?? this.batchSize * (this.concurrency + 1);
    return Math.min(this.prefetch, Math.max(this.concurrency + 1, Math.round(target / this.averageWeight)));
  }

  private onDelivery(delivery: Delivery): void {
    // Tracked even when dropped (stopping): an unsettled delivery must block every multiple ack above it.
    this.acks.for(delivery.channel).add(delivery.message.fields.deliveryTag, delivery.message);
    if (this.stopping) return;
    this.stats.received += 1;
    consumerMetrics.consumed.inc({ queue: this.options.queue });
    this.buffer.push(delivery);
    this.buffered += delivery.weight;
    if (this.buffered >= this.batchSize) this.dispatch();
    else if (!this.timer) {
      const start = () => {
        this.timer = undefined;
        this.dispatch();
      };
      // 0: the batch starts on the next turn of the event loop, with every message the same read
      // of the socket brought; while all slots are busy, messages gather until one is free.
      this.timer = this.maxWaitMs > 0 ? setTimeout(start, this.maxWaitMs) : setImmediate(start);
    }
  }

  private clearTimer(): void {
    if (this.timer === undefined) return;
    if (this.maxWaitMs > 0) clearTimeout(this.timer as NodeJS.Timeout);
    else clearImmediate(this.timer as NodeJS.Immediate);
    this.timer = undefined;
  }

  private dispatch(): void {
    while (!this.stopping && this.inFlight < this.concurrency && this.buffer.length > 0) {
      // Beside small batches only, a spare slot opens for enough waiting weight; otherwise the end
      // of the batch in flight starts the next. Beside a heavy one (long) it is open for anything.
      if (this.inFlight > 0 && this.heavyInFlight === 0 && this.buffered < this.spareSlotWeight) break;
      const before = this.buffered;
      const batch = this.takeBatch();
      const heavy = this.spareSlotWeight > 0 && before - this.buffered >= this.spareSlotWeight;
      this.inFlight += 1;
      if (heavy) this.heavyInFlight += 1;
      void this.run(batch)
        .catch((error: unknown) => this.logger.error(`batch of ${batch.length} not settled: ${errorMessage(error)}`))
        .finally(() => {
          this.inFlight -= 1;
          if (heavy) this.heavyInFlight -= 1;
          if (this.inFlight === 0) for (const resolve of this.drainWaiters.splice(0)) resolve();
          if (this.buffer.length > 0) this.dispatch();
        });
    }
  }

  /** The first messages of the buffer up to `batchSize` of weight (at least one). */
  private takeBatch(): Delivery[] {
    let count = 0;
    let weight = 0;
    while (count < this.buffer.length && (count === 0 || weight + this.buffer[count].weight <= this.batchSize)) {
      weight += this.buffer[count].weight;
      count += 1;
    }
    this.buffered -= weight;
    return this.buffer.splice(0, count);
  }

  private async run(batch: Delivery[]): Promise<void> {
    let outcome: BatchOutcome | void;
    try {
      outcome = await this.options.handle(batch.map((delivery) => delivery.message), { signal: this.stopped.signal });
      this.failures = 0;
      this.stats.batches += 1;
    } catch (error) {
      await this.requeueLater(batch, error);
      return;
    }
    await this.conclude(batch, outcome);
  }

  /** The handler resolved: dead letters out first, then the acks (the refused ones' included). */
  private async conclude(batch: Delivery[], outcome: BatchOutcome | void): Promise<void> {
    const byMessage = new Map(batch.map((delivery) => [delivery.message, delivery]));
    const refused: Refusal[] = [];
    const refusedSet = new Set<Delivery>();
    for (const { message, reason, content, headers } of outcome?.deadLetters ?? []) {
      const delivery = byMessage.get(message);
      // A whole message is dead-lettered once; its parts (own content) each.
      if (!delivery || (refusedSet.has(delivery) && !content)) continue;
      refused.push({ delivery, reason, content, headers });
      refusedSet.add(delivery);
    }
    const accepted = batch.filter((delivery) => !refusedSet.has(delivery));
    let settled: readonly Delivery[] = batch;
    if (this.options.deadLetter) {
      try {
        await Promise.all(refused.map((r) => this.deadLetter(r)));
      } catch (error) {
        // The accepted ones took effect: ack them; the refused ones come back and are refused again.
        this.logger.error(`dead-lettering failed: ${errorMessage(error)}`);
        this.settle(accepted, [...refusedSet]);
        return;
      }
    } else if (refused.length > 0) {
      // No dead-letter queue of ours: the queue's own policy decides (or the broker drops them).
      for (const { reason } of refused) this.logger.warn(`rejected: ${reason.slice(0, 300)}`);
      this.settle([], [...refusedSet], false);
      settled = accepted;
    }
    if (outcome?.beforeAck) {
      await outcome.beforeAck().catch((error: unknown) => this.logger.warn(`before acknowledging: ${errorMessage(error)}`));
    }
    this.settle(settled, []);
    this.stats.deadLettered += refusedSet.size;
    if (this.options.deadLetter && refused.length > 0) consumerMetrics.deadLettered.inc({ queue: this.options.queue }, refusedSet.size);
  }

  /** Nothing of the batch took effect: back to the queue after a pause (at once when stopping). */
  private async requeueLater(batch: Delivery[], error: unknown): Promise<void> {
    if (this.stopping) {
      this.logger.warn(`batch of ${batch.length} given up on stop (${errorMessage(error)}); requeued`);
    } else {
      this.failures += 1;
      const delay = backoffDelay(this.failures, this.retry);
      this.logger.error(`batch of ${batch.length} failed (${errorMessage(error)}); requeued in ${delay} ms`);
      await this.pause(delay);
    }
    this.settle([], batch);
  }

  /** Waits `ms`, or less when `stop()` comes first (the connection is about to close anyway). */
  private pause(ms: number): Promise<void> {
    const signal = this.stopped.signal;
    if (signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private async deadLetter({ delivery, reason, content, headers: extra }: Refusal): Promise<void> {
    const target = this.options.deadLetter;
    if (!target || !this.publishChannel) throw new Error('no dead-letter queue');
    this.logger.warn(`rejected: ${reason.slice(0, 300)}`);
    // The original message as it came (id, timestamp, correlation, headers), plus why it was refused.
    const original = delivery.message.properties;
    const headers: Record<string, unknown> = {
      ...(original.headers ?? {}),
      ...(extra ?? {}),
      [target.reasonHeader]: reason.slice(0, MAX_REASON_LENGTH),
    };
    if (target.rejectedAtHeader) headers[target.rejectedAtHeader] = new Date().toISOString();
    await this.publishChannel.sendToQueue(target.queue, content ?? delivery.message.content, {
      persistent: true,
      contentType: original.contentType ?? 'application/json',
      contentEncoding: original.contentEncoding ?? undefined,
      messageId: original.messageId ?? undefined,
      correlationId: original.correlationId ?? undefined,
      timestamp: original.timestamp ?? undefined,
      type: original.type ?? undefined,
      appId: original.appId ?? undefined,
      headers,
    });
  }

  /**
   * Settles deliveries on the channel each came from: every nack is sent first, one by one, then
   * each channel gets at most one `basic.ack` with `multiple`, up to the highest tag below which
   * nothing is pending any more (a batch still in flight, or a nack not yet sent, holds back the
   * acks above it: they go out with the ack of a later settle). After a reconnect the old channel
   * is gone: sends fail and the broker redelivers (handlers must be idempotent).
   */
  private settle(acks: readonly Delivery[], nacks: readonly Delivery[], requeue = true): void {
    const channels = new Set<ConfirmChannel>();
    if (nacks.length > 0) consumerMetrics.rejected.inc({ queue: this.options.queue }, nacks.length);
    for (const { channel, message } of nacks) {
      try {
        channel.nack(message, false, requeue);
      } catch {
        // channel closed: redelivered
      }
      this.acks.for(channel).nacked(message.fields.deliveryTag);
      channels.add(channel);
    }
    for (const { channel, message } of acks) {
      this.acks.for(channel).ready(message.fields.deliveryTag);
      channels.add(channel);
    }
    for (const channel of channels) {
      const watermark = this.acks.for(channel).flush();
      if (!watermark) continue;
      try {
        channel.ack(watermark.item, true);
        this.stats.acked += watermark.count;
        consumerMetrics.acked.inc({ queue: this.options.queue }, watermark.count);
      } catch {
        // channel closed: redelivered
      }
    }
  }
}
