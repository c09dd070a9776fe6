import { Logger } from '@nestjs/common';
import {
  errorMessage,
  MAX_OBSERVATION_ARRAY_BYTES,
  MAX_OBSERVATIONS_PER_MESSAGE,
  Observation,
  ObservationHeaders,
  Queues,
} from '@cars/contracts';
import { assertObservationTopology, BatchConsumer, BatchHandler, ConsumerStats, DeadLetter } from '@cars/messaging';
import type { ConsumeMessage } from 'amqplib';
import { IngestOutcome, ObservationProcessor, parseObservation } from '../observations/observation.processor';

export interface ObservationConsumerOptions {
  url: string;
  /** Observations per transaction (an array message counts its elements; one message is never split). */
  batchSize?: number;
  /** How long a lone message waits for company before its batch starts (default 0: none; batches grow while both slots are busy). */
  maxWaitMs?: number;
  /** Batches in flight at once (each its own transaction). */
  concurrency?: number;
  /**
   * Unacknowledged messages the broker may hand us. Default: batchSize × (concurrency + 1). A
   * channel-wide prefetch keeps the observations held near that many too, whatever each message
   * carries (BatchConsumer `prefetchWeight`).
   */
  prefetch?: number;
}

const logger = new Logger('ObservationConsumer');

/**
 * Consumes the durable `observations` queue: messages (one observation, or an array of them) are
 * grouped into batches of about `batchSize` observations, each batch is applied in one
 * transaction by the ObservationProcessor, and acknowledged after the commit. A malformed
 * observation (bad JSON, failed validation, refused by the database) is published to
 * `observations.dead-letter` with the reason in `x-rejection-reason` and acknowledged: it never
 * blocks the queue and never half-writes; in an array message only the refused element is
 * dead-lettered. When the database is unreachable the batch goes back to the queue after a
 * pause. The broker side (batching, acks, dead letters, requeues) is the shared BatchConsumer's.
 */
export class ObservationConsumer {
  /** Counters for health and benchmarks. */
  readonly stats: ConsumerStats;
  private readonly consumer: BatchConsumer;

  constructor(processor: ObservationProcessor, options: ObservationConsumerOptions) {
    // Each message is decoded once, on delivery: its observation count weighs it into a batch.
    const decoded = new WeakMap<ConsumeMessage, DecodedMessage>();
    this.consumer = new BatchConsumer({
      name: ObservationConsumer.name,
      url: options.url,
      queue: Queues.Observations,
      topology: assertObservationTopology,
      handle: observationBatchHandler(processor, (message) => decoded.get(message)),
      weigh: (message) => {
        const decodedMessage = decodeMessage(message);
        decoded.set(message, decodedMessage);
        return weightOf(decodedMessage);
      },
      batchSize: options.batchSize ?? 1000,
      maxWaitMs: options.maxWaitMs ?? 0,
      concurrency: options.concurrency ?? 2,
      // A second batch at once only for a tenth of a batch waiting (a backlog, arrays): at a steady
      // trickle one batch at a time, twice as large, costs the database and the cores less.
      spareSlotWeight: Math.ceil((options.batchSize ?? 1000) / 10),
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
 * One batch of `observations` messages: decoded and validated (an array message element by
 * element), the valid observations applied in one transaction by the processor (a throw means
 * nothing was written: the batch is requeued), the malformed and the refused handed back as dead
 * letters — a whole message, or one element of an array. Before the acks, what became of each
 * observation of an `ingest --wait` run is recorded. `decoded` gives a message decoded on delivery.
 */
export function observationBatchHandler(
  processor: ObservationProcessor,
  decoded: (message: ConsumeMessage) => DecodedMessage | undefined = () => undefined,
): BatchHandler {
  return async (messages) => {
    const valid: Observation[] = [];
    const origins: Origin[] = [];
    const deadLetters: DeadLetter[] = [];
    const outcomes = new Map<ConsumeMessage, Outcomes>();
    for (const message of messages) {
      const decodedMessage = decoded(message) ?? decodeMessage(message);
      if (!decodedMessage.ok) {
        deadLetters.push({ message, reason: decodedMessage.reason });
        outcomes.set(message, { array: false, list: ['rejected'] });
        continue;
      }
      const parts = decodedMessage.parts;
      outcomes.set(message, { array: decodedMessage.array, list: parts.map(() => 'applied') });
      parts.forEach((part, i) => {
        const index = decodedMessage.array ? i : null;
        if (part.ok) {
          valid.push(part.value);
          origins.push({ message, index });
        } else {
          deadLetters.push(refusal({ message, index }, part.reason, part.value));
          setOutcome(outcomes, { message, index }, 'rejected');
        }
      });
    }
    const result = await processor.processBatch(valid);
    for (const r of result.rejected) {
      deadLetters.push(refusal(origins[r.index], r.reason, valid[r.index]));
      setOutcome(outcomes, origins[r.index], 'rejected');
    }
    for (const index of result.pendingIndexes) setOutcome(outcomes, origins[index], 'pending');
    return { deadLetters, beforeAck: () => recordOutcomes(processor, outcomes) };
  };
}

/** A message decoded: its observations (each valid or not), or why the whole message is refused. */
export type DecodedMessage =
  | { ok: true; array: boolean; parts: ({ ok: true; value: Observation } | { ok: false; reason: string; value: unknown })[] }
  | { ok: false; reason: string };

/** Where an observation of the batch came from: its message, and its position when that is an array. */
interface Origin {
  message: ConsumeMessage;
  index: number | null;
}

type Outcome = IngestOutcome['outcome'];

/** What became of a message's observations, in order. */
interface Outcomes {
  array: boolean;
  list: Outcome[];
}

/**
 * A message's body: one observation (a JSON object) or an array of them within the bounds of the
 * contract; anything else is refused whole.
 */
export function decodeMessage(message: ConsumeMessage): DecodedMessage {
  const content = message.content;
  // An oversize array is refused before it is parsed.
  if (content.length > MAX_OBSERVATION_ARRAY_BYTES && isArrayText(content)) {
    return { ok: false, reason: `message too large: ${content.length} bytes, an array of observations takes at most ${MAX_OBSERVATION_ARRAY_BYTES}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(content.toString('utf8'));
  } catch (error) {
    return { ok: false, reason: `malformed JSON: ${errorMessage(error)}` };
  }
  if (!Array.isArray(json)) return { ok: true, array: false, parts: [validated(json)] };
  if (json.length === 0) return { ok: false, reason: 'empty array: a message carries at least one observation' };
  if (json.length > MAX_OBSERVATIONS_PER_MESSAGE) {
    return { ok: false, reason: `too many observations: ${json.length}, a message carries at most ${MAX_OBSERVATIONS_PER_MESSAGE}` };
  }
  return { ok: true, array: true, parts: json.map(validated) };
}

/** Whether a JSON text starts an array (after any JSON whitespace). */
function isArrayText(content: Buffer): boolean {
  for (const byte of content) {
    if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d) continue;
    return byte === 0x5b; // [
  }
  return false;
}

/** The weight of a message in a batch: its observations (a refused message weighs one). */
function weightOf(decoded: DecodedMessage): number {
  return decoded.ok ? decoded.parts.length : 1;
}

function validated(value: unknown): { ok: true; value: Observation } | { ok: false; reason: string; value: unknown } {
  const parsed = parseObservation(value);
  return parsed.ok ? parsed : { ...parsed, value };
}

/** The dead letter of an observation: the whole message, or the element of an array alone (its JSON, its position). */
function refusal(origin: Origin, reason: string, value: unknown): DeadLetter {
  if (origin.index === null) return { message: origin.message, reason };
  return {
    message: origin.message,
    reason,
    content: Buffer.from(JSON.stringify(value) ?? 'null'),
    headers: { [ObservationHeaders.Index]: origin.index },
  };
}

function setOutcome(outcomes: Map<ConsumeMessage, Outcomes>, origin: Origin, outcome: Outcome): void {
  const of = outcomes.get(origin.message);
  if (of) of.list[origin.index ?? 0] = outcome;
}

/**
 * For `ingest --wait` runs (messages with a run header): what became of each observation — under
 * the message id, or `<message id>/<index>` for each element of an array message.
 */
async function recordOutcomes(processor: ObservationProcessor, byMessage: ReadonlyMap<ConsumeMessage, Outcomes>): Promise<void> {
  const outcomes: IngestOutcome[] = [];
  for (const [message, { array, list }] of byMessage) {
    const run = message.properties.headers?.[ObservationHeaders.IngestRun] as unknown;
    const messageId = message.properties.messageId as unknown;
    if (typeof run !== 'string' || typeof messageId !== 'string') continue;
    list.forEach((outcome, i) => outcomes.push({ runId: run, messageId: array ? `${messageId}/${i}` : messageId, outcome }));
  }
  if (outcomes.length === 0) return;
  await processor.recordIngestOutcomes(outcomes).catch((error: unknown) => {
    logger.warn(`could not record ingest outcomes: ${errorMessage(error)}`);
  });
}
