import { Logger } from '@nestjs/common';
import { Observation, ObservationHeaders, Queues, errorMessage } from '@cars/contracts';
import { assertObservationTopology, backoffDelay, RMQ_SOCKET_OPTIONS } from '@cars/messaging';
import amqp, { AmqpConnectionManager, ChannelWrapper } from 'amqp-connection-manager';
import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { IngestOutcome, ObservationProcessor, parseObservation } from '../observations/observation.processor';
import { AckTrackers } from './ack-tracker';

export interface ObservationConsumerOptions {
  url: string;
  /** Observations per transaction. */
  batchSize?: number;
  /** How long a lone message waits for company before its batch starts. */
  maxWaitMs?: number;
  /** Batches in flight at once (each its own transaction). */
  concurrency?: number;
  /** Unacknowledged messages the broker may hand us. Default: batchSize × (concurrency + 1). */
  prefetch?: number;
}

interface Delivery {
  message: ConsumeMessage;
  channel: ConfirmChannel;
}

const MAX_REASON_LENGTH = 2000;

/**
 * Consumes the durable `observations` queue: messages are grouped into batches, each batch is
 * applied in one transaction by the ObservationProcessor, and acknowledged after the commit.
 * A malformed observation (bad JSON, failed validation, refused by the database) is published to
 * `observations.dead-letter` with the reason in `x-rejection-reason` and acknowledged: it never
 * blocks the queue and never half-writes. When the database is unreachable the batch goes back
 * to the queue after a pause. Acknowledgements go out as one `basic.ack` with `multiple` per
 * settled batch (see `settle`), nacks one by one.
 */
export class ObservationConsumer {
  private readonly logger = new Logger(ObservationConsumer.name);
  private readonly batchSize: number;
  private readonly maxWaitMs: number;
  private readonly concurrency: number;
  private readonly prefetch: number;
  private connection?: AmqpConnectionManager;
  private consumeChannel?: ChannelWrapper;
  private publishChannel?: ChannelWrapper;
  private buffer: Delivery[] = [];
  private timer?: NodeJS.Timeout;
  private inFlight = 0;
  private drained?: () => void;
  private stopping = false;
  private failures = 0;
  /** Outstanding delivery tags per channel, so a settled batch costs one `basic.ack` with `multiple`. */
  private readonly acks = new AckTrackers<ConfirmChannel, ConsumeMessage>();
  /** Counters for health and benchmarks. */
  readonly stats = { received: 0, acked: 0, deadLettered: 0, batches: 0 };

  constructor(
    private readonly processor: ObservationProcessor,
    private readonly options: ObservationConsumerOptions,
  ) {
    this.batchSize = options.batchSize ?? 1000;
    this.maxWaitMs = options.maxWaitMs ?? 5;
    this.concurrency = options.concurrency ?? 2;
    this.prefetch = options.prefetch ?? this.batchSize * (this.concurrency + 1);
  }

  async start(): Promise<void> {
    this.stopping = false;
    this.connection = amqp.connect([this.options.url], RMQ_SOCKET_OPTIONS);
    this.publishChannel = this.connection.createChannel({
      confirm: true,
      publishTimeout: 30000,
      setup: (channel: ConfirmChannel) => assertObservationTopology(channel),
    });
    this.consumeChannel = this.connection.createChannel({
      confirm: true,
      setup: async (channel: ConfirmChannel) => {
        await assertObservationTopology(channel);
        await channel.prefetch(this.prefetch);
        await channel.consume(Queues.Observations, (message) => {
          if (message) this.onDelivery({ message, channel });
        });
      },
    });
    await this.consumeChannel.waitForConnect();
  }

  isConnected(): boolean {
    return this.connection?.isConnected() ?? false;
  }

  /** Stops consuming, finishes the batches in flight, closes the connection (unacked messages return). */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.timer);
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    this.buffer = [];
    await this.consumeChannel?.close().catch(() => undefined);
    await this.publishChannel?.close().catch(() => undefined);
    await this.connection?.close().catch(() => undefined);
  }

  private onDelivery(delivery: Delivery): void {
    // Tracked even when dropped (stopping): an unsettled delivery must block every multiple ack above it.
    this.acks.for(delivery.channel).add(delivery.message.fields.deliveryTag, delivery.message);
    if (this.stopping) return;
    this.stats.received += 1;
    this.buffer.push(delivery);
    if (this.buffer.length >= this.batchSize) this.dispatch();
    else this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.dispatch();
    }, this.maxWaitMs);
  }

  private dispatch(): void {
    while (!this.stopping && this.inFlight < this.concurrency && this.buffer.length > 0) {
      const batch = this.buffer.splice(0, this.batchSize);
      this.inFlight += 1;
      void this.handle(batch).finally(() => {
        this.inFlight -= 1;
        if (this.inFlight === 0 && this.drained) this.drained();
        if (this.buffer.length > 0) this.dispatch();
      });
    }
  }

  private async handle(batch: Delivery[]): Promise<void> {
    const valid: Observation[] = [];
    const validDeliveries: Delivery[] = [];
    const rejected: { delivery: Delivery; reason: string }[] = [];
    for (const delivery of batch) {
      let json: unknown;
      try {
        json = JSON.parse(delivery.message.content.toString('utf8'));
      } catch (error) {
        rejected.push({ delivery, reason: `malformed JSON: ${errorMessage(error)}` });
        continue;
      }
      const parsed = parseObservation(json);
      if (parsed.ok) {
        valid.push(parsed.value);
        validDeliveries.push(delivery);
      } else {
        rejected.push({ delivery, reason: parsed.reason });
      }
    }
    let parked: Set<Delivery>;
    try {
      const result = await this.processor.processBatch(valid);
      for (const r of result.rejected) rejected.push({ delivery: validDeliveries[r.index], reason: r.reason });
      parked = new Set(result.pendingIndexes.map((index) => validDeliveries[index]));
      this.failures = 0;
      this.stats.batches += 1;
    } catch (error) {
      // Nothing was written: the whole batch goes back to the queue after a pause.
      this.failures += 1;
      const delay = backoffDelay(this.failures, { baseMs: 400, maxMs: 10_000 });
      this.logger.error(`batch of ${batch.length} failed (${errorMessage(error)}); requeued in ${delay} ms`);
      await new Promise((resolve) => setTimeout(resolve, delay));
      this.settle([], batch);
      return;
    }
    const rejectedSet = new Set(rejected.map((r) => r.delivery));
    try {
      await Promise.all(rejected.map((r) => this.deadLetter(r.delivery, r.reason)));
    } catch (error) {
      // The valid ones are committed: ack them; the rejected ones come back and are rejected again.
      this.logger.error(`dead-lettering failed: ${errorMessage(error)}`);
      this.settle(
        batch.filter((delivery) => !rejectedSet.has(delivery)),
        [...rejectedSet],
      );
      return;
    }
    await this.recordOutcomes(batch, rejectedSet, parked);
    this.settle(batch, []);
    this.stats.deadLettered += rejected.length;
  }

  /** For `ingest --wait` runs (messages with a run header): what became of each observation. */
  private async recordOutcomes(batch: Delivery[], rejected: Set<Delivery>, parked: Set<Delivery>): Promise<void> {
    const outcomes: IngestOutcome[] = [];
    for (const delivery of batch) {
      const run = delivery.message.properties.headers?.[ObservationHeaders.IngestRun] as unknown;
      const messageId = delivery.message.properties.messageId as unknown;
      if (typeof run !== 'string' || typeof messageId !== 'string') continue;
      const outcome = rejected.has(delivery) ? 'rejected' : parked.has(delivery) ? 'pending' : 'applied';
      outcomes.push({ runId: run, messageId, outcome });
    }
    if (outcomes.length === 0) return;
    await this.processor.recordIngestOutcomes(outcomes).catch((error: unknown) => {
      this.logger.warn(`could not record ingest outcomes: ${errorMessage(error)}`);
    });
  }

  private async deadLetter(delivery: Delivery, reason: string): Promise<void> {
    this.logger.warn(`observation rejected: ${reason.slice(0, 300)}`);
    // The original message as it came (id, timestamp, correlation, headers), plus why it was refused.
    const original = delivery.message.properties;
    await this.publishChannel!.sendToQueue(Queues.ObservationsDeadLetter, delivery.message.content, {
      persistent: true,
      contentType: original.contentType ?? 'application/json',
      contentEncoding: original.contentEncoding ?? undefined,
      messageId: original.messageId ?? undefined,
      correlationId: original.correlationId ?? undefined,
      timestamp: original.timestamp ?? undefined,
      type: original.type ?? undefined,
      appId: original.appId ?? undefined,
      headers: {
        ...(original.headers ?? {}),
        [ObservationHeaders.RejectionReason]: reason.slice(0, MAX_REASON_LENGTH),
        [ObservationHeaders.RejectedAt]: new Date().toISOString(),
      },
    });
  }

  /**
   * Settles deliveries on the channel each came from: every nack is sent first, one by one (and
   * requeues), then each channel gets at most one `basic.ack` with `multiple`, up to the highest
   * tag below which nothing is pending any more (a batch still in flight, or a nack not yet
   * sent, holds back the acks above it: they go out with the ack of a later settle). After a
   * reconnect the old channel is gone: sends fail and the broker redelivers (processing is
   * idempotent).
   */
  private settle(acks: readonly Delivery[], nacks: readonly Delivery[]): void {
    const channels = new Set<ConfirmChannel>();
    for (const { channel, message } of nacks) {
      try {
        channel.nack(message, false, true);
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
      } catch {
        // channel closed: redelivered
      }
    }
  }
}
