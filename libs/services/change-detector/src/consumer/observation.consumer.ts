import { Logger } from '@nestjs/common';
import { Observation, ObservationHeaders, Queues, errorMessage } from '@cars/contracts';
import { assertObservationTopology, BatchConsumer, BatchHandler, ConsumerStats, DeadLetter } from '@cars/messaging';
import type { ConsumeMessage } from 'amqplib';
import { IngestOutcome, ObservationProcessor, parseObservation } from '../observations/observation.processor';

export interface ObservationConsumerOptions {
  url: string;
  /** Observations per transaction. */
  batchSize?: number;
  /** How long a lone message waits for company before its batch starts (default 0: none; batches grow while both slots are busy). */
  maxWaitMs?: number;
  /** Batches in flight at once (each its own transaction). */
  concurrency?: number;
  /** Unacknowledged messages the broker may hand us. Default: batchSize × (concurrency + 1). */
  prefetch?: number;
}

const logger = new Logger('ObservationConsumer');

/**
 * Consumes the durable `observations` queue: messages are grouped into batches, each batch is
 * applied in one transaction by the ObservationProcessor, and acknowledged after the commit.
 * A malformed observation (bad JSON, failed validation, refused by the database) is published to
 * `observations.dead-letter` with the reason in `x-rejection-reason` and acknowledged: it never
 * blocks the queue and never half-writes. When the database is unreachable the batch goes back
 * to the queue after a pause. The broker side (batching, acks, dead letters, requeues) is the
 * shared BatchConsumer's.
 */
export class ObservationConsumer {
  /** Counters for health and benchmarks. */
  readonly stats: ConsumerStats;
  private readonly consumer: BatchConsumer;

  constructor(processor: ObservationProcessor, options: ObservationConsumerOptions) {
    this.consumer = new BatchConsumer({
      name: ObservationConsumer.name,
      url: options.url,
      queue: Queues.Observations,
      topology: assertObservationTopology,
      handle: observationBatchHandler(processor),
      batchSize: options.batchSize ?? 1000,
      maxWaitMs: options.maxWaitMs ?? 0,
      concurrency: options.concurrency ?? 2,
      prefetch: options.prefetch,
      deadLetter: {
        queue: Queues.ObservationsDeadLetter,
        reasonHeader: ObservationHeaders.RejectionReason,
        rejectedAtHeader: ObservationHeaders.RejectedAt,
      },
    });
    this.stats = this.consumer.stats;
  }

  start(): Promise<void> {
    return this.consumer.start();
  }

  isConnected(): boolean {
    return this.consumer.isConnected();
  }

  /** Stops consuming, finishes the batches in flight, closes the connection (unacked messages return). */
  stop(): Promise<void> {
    return this.consumer.stop();
  }
}

/**
 * One batch of `observations` messages: parsed and validated, the valid ones applied in one
 * transaction by the processor (a throw means nothing was written: the batch is requeued), the
 * malformed and the refused handed back as dead letters. Before the acks, what became of each
 * observation of an `ingest --wait` run is recorded.
 */
export function observationBatchHandler(processor: ObservationProcessor): BatchHandler {
  return async (messages) => {
    const valid: Observation[] = [];
    const validMessages: ConsumeMessage[] = [];
    const deadLetters: DeadLetter[] = [];
    for (const message of messages) {
      const parsed = parseMessage(message);
      if (parsed.ok) {
        valid.push(parsed.value);
        validMessages.push(message);
      } else {
        deadLetters.push({ message, reason: parsed.reason });
      }
    }
    const result = await processor.processBatch(valid);
    for (const r of result.rejected) deadLetters.push({ message: validMessages[r.index], reason: r.reason });
    const parked = new Set(result.pendingIndexes.map((index) => validMessages[index]));
    const rejected = new Set(deadLetters.map((letter) => letter.message));
    return { deadLetters, beforeAck: () => recordOutcomes(processor, messages, rejected, parked) };
  };
}

function parseMessage(message: ConsumeMessage): { ok: true; value: Observation } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(message.content.toString('utf8'));
  } catch (error) {
    return { ok: false, reason: `malformed JSON: ${errorMessage(error)}` };
  }
  return parseObservation(json);
}

/** For `ingest --wait` runs (messages with a run header): what became of each observation. */
async function recordOutcomes(
  processor: ObservationProcessor,
  messages: readonly ConsumeMessage[],
  rejected: ReadonlySet<ConsumeMessage>,
  parked: ReadonlySet<ConsumeMessage>,
): Promise<void> {
  const outcomes: IngestOutcome[] = [];
  for (const message of messages) {
    const run = message.properties.headers?.[ObservationHeaders.IngestRun] as unknown;
    const messageId = message.properties.messageId as unknown;
    if (typeof run !== 'string' || typeof messageId !== 'string') continue;
    const outcome = rejected.has(message) ? 'rejected' : parked.has(message) ? 'pending' : 'applied';
    outcomes.push({ runId: run, messageId, outcome });
  }
  if (outcomes.length === 0) return;
  await processor.recordIngestOutcomes(outcomes).catch((error: unknown) => {
    logger.warn(`could not record ingest outcomes: ${errorMessage(error)}`);
  });
}
