import { Logger } from '@nestjs/common';
import { MAX_OBSERVATION_ARRAY_BYTES, MAX_OBSERVATIONS_PER_MESSAGE, ObservationHeaders } from '@cars/contracts';
import type { BatchContext, BatchOutcome } from '@cars/messaging';
import type { ConsumeMessage, MessageProperties } from 'amqplib';
import type { IngestOutcome, ObservationProcessor, ProcessResult } from '../observations/observation.processor';
import { decodeMessage, ObservationConsumer, observationBatchHandler } from './observation.consumer';

const observation = (id: string) => ({
  source: 'bringatrailer',
  source_auction_id: id,
  observed_at: '2026-11-21T12:00:03Z',
  auction: { status: 'active', price: 5, currency: 'USD' },
});

let tag = 0;
function message(body: unknown, properties: Partial<MessageProperties> = {}): ConsumeMessage {
  const content = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  tag += 1;
  return { fields: { deliveryTag: tag }, content, properties: { headers: {}, ...properties } } as unknown as ConsumeMessage;
}

/** A message of an `ingest --wait` run. */
const runMessage = (body: unknown, messageId: string) =>
  message(body, { messageId, headers: { [ObservationHeaders.IngestRun]: 'run-1' } });

const result = (overrides: Partial<ProcessResult> = {}): ProcessResult => ({
  accepted: 0,
  rejected: [],
  pending: 0,
  pendingIndexes: [],
  auctionsCreated: 0,
  auctionsUpdated: 0,
  bidsCreated: 0,
  events: 0,
  ...overrides,
});

/** A processor answering `answer`, recording what it was given. */
function processor(answer: () => Promise<ProcessResult> = async () => result()) {
  const batches: { source_auction_id: string }[][] = [];
  const recorded: IngestOutcome[][] = [];
  let recordOutcomes = async (outcomes: readonly IngestOutcome[]) => void recorded.push([...outcomes]);
  const fake = {
    processBatch: (observations: { source_auction_id: string }[]) => {
      batches.push(observations);
      return answer();
    },
    recordIngestOutcomes: (outcomes: readonly IngestOutcome[]) => recordOutcomes(outcomes),
  };
  return {
    processor: fake as unknown as ObservationProcessor,
    batches,
    recorded,
    failRecording: () => (recordOutcomes = () => Promise.reject(new Error('database down'))),
  };
}

const context: BatchContext = { signal: new AbortController().signal };

async function handle(p: ObservationProcessor, messages: ConsumeMessage[]): Promise<BatchOutcome> {
  return (await observationBatchHandler(p)(messages, context)) ?? {};
}

const reasons = (outcome: BatchOutcome) => (outcome.deadLetters ?? []).map((d) => [d.message, d.reason] as const);

beforeAll(() => Logger.overrideLogger(false));

describe('observationBatchHandler', () => {
  it('applies the valid observations of a batch in one call, in order, and refuses none', async () => {
    const p = processor();
    const outcome = await handle(p.processor, [message(observation('1')), message(observation('2'))]);
    expect(p.batches.map((b) => b.map((o) => o.source_auction_id))).toEqual([['1', '2']]);
    expect(reasons(outcome)).toEqual([]);
  });

  it('dead-letters malformed JSON and invalid observations without passing them on', async () => {
    const p = processor();
    const notJson = message('this is not json');
    const invalid = message({ source: 'bringatrailer', observed_at: '2026-11-21T12:00:03Z' });
    const outcome = await handle(p.processor, [notJson, message(observation('1')), invalid]);
    expect(p.batches.map((b) => b.map((o) => o.source_auction_id))).toEqual([['1']]);
    const refused = reasons(outcome);
    expect(refused.map(([m]) => m)).toEqual([notJson, invalid]);
    expect(refused[0][1]).toMatch(/^malformed JSON: /);
    expect(refused[1][1]).toMatch(/^invalid observation: .*source_auction_id/);
  });

  it('dead-letters what the processor refused, by its position among the valid ones', async () => {
    const p = processor(async () => result({ rejected: [{ index: 1, reason: 'the observation could not be applied: boom' }] }));
    const valid = [message(observation('1')), message(observation('2'))];
    const outcome = await handle(p.processor, [message('{'), valid[0], valid[1]]);
    expect(reasons(outcome).slice(1)).toEqual([[valid[1], 'the observation could not be applied: boom']]);
  });

  it('throws when the processor throws (nothing was written: the batch is requeued) and records nothing', async () => {
    const p = processor(() => Promise.reject(new Error('database down')));
    await expect(handle(p.processor, [runMessage(observation('1'), 'a')])).rejects.toThrow('database down');
    expect(p.recorded).toEqual([]);
  });

  it('records the outcome of every observation of an ingest run before the acks', async () => {
    const p = processor(async () => result({ pendingIndexes: [1], rejected: [{ index: 2, reason: 'refused' }] }));
    const messages = [
      runMessage(observation('1'), 'applied-1'),
      runMessage(observation('2'), 'parked-1'),
      runMessage(observation('3'), 'refused-1'),
      runMessage('not json', 'malformed-1'),
      message(observation('4'), { messageId: 'no-run' }),
      message(observation('5'), { headers: { [ObservationHeaders.IngestRun]: 'run-1' } }),
    ];
    const outcome = await handle(p.processor, messages);
    expect(p.recorded).toEqual([]);
    await outcome.beforeAck?.();
    expect(p.recorded).toEqual([
      [
        { runId: 'run-1', messageId: 'applied-1', outcome: 'applied' },
        { runId: 'run-1', messageId: 'parked-1', outcome: 'pending' },
        { runId: 'run-1', messageId: 'refused-1', outcome: 'rejected' },
        { runId: 'run-1', messageId: 'malformed-1', outcome: 'rejected' },
      ],
    ]);
  });

  it('records nothing for a batch without ingest runs, and never fails the batch over the record', async () => {
    const p = processor();
    const plain = await handle(p.processor, [message(observation('1'))]);
    await plain.beforeAck?.();
    expect(p.recorded).toEqual([]);
    p.failRecording();
    const run = await handle(p.processor, [runMessage(observation('2'), 'x')]);
    await expect(run.beforeAck?.()).resolves.toBeUndefined();
  });
});

const ids = (p: ReturnType<typeof processor>) => p.batches.map((b) => b.map((o) => o.source_auction_id));

describe('observationBatchHandler, array messages', () => {
  const letters = (outcome: BatchOutcome) =>
    (outcome.deadLetters ?? []).map((d) => ({
      message: d.message,
      reason: d.reason,
      body: d.content?.toString('utf8'),
      index: d.headers?.[ObservationHeaders.Index],
    }));

  it('applies the observations of array messages and single ones in one call, in message order', async () => {
    const p = processor();
    const outcome = await handle(p.processor, [
      message([observation('1'), observation('2')]),
      message(observation('3')),
      message([observation('4')]),
    ]);
    expect(ids(p)).toEqual([['1', '2', '3', '4']]);
    expect(reasons(outcome)).toEqual([]);
  });

  it('dead-letters an invalid element alone (its JSON, its position) and applies the others of the message', async () => {
    const p = processor();
    const invalid = { source: 'bringatrailer', observed_at: '2026-11-21T12:00:03Z' };
    const batch = message([observation('1'), invalid, observation('3')]);
    const outcome = await handle(p.processor, [batch]);
    expect(ids(p)).toEqual([['1', '3']]);
    expect(letters(outcome)).toEqual([
      { message: batch, reason: expect.stringMatching(/^invalid observation: .*source_auction_id/), body: JSON.stringify(invalid), index: 1 },
    ]);
  });

  it('dead-letters an element the processor refused alone, found by its position among the valid ones', async () => {
    const p = processor(async () => result({ rejected: [{ index: 2, reason: 'the observation could not be applied: boom' }] }));
    const first = message([observation('1'), 'not an observation', observation('2')]);
    const second = message([observation('3'), observation('4')]);
    const outcome = await handle(p.processor, [first, second]);
    expect(ids(p)).toEqual([['1', '2', '3', '4']]);
    expect(letters(outcome)).toEqual([
      { message: first, reason: expect.stringMatching(/^invalid observation: /), body: '"not an observation"', index: 1 },
      { message: second, reason: 'the observation could not be applied: boom', body: JSON.stringify(observation('3')), index: 0 },
    ]);
  });

  it('dead-letters whole an empty array, one longer than the bound, or one larger than the bound, and applies the rest', async () => {
    const p = processor();
    const empty = message([]);
    const tooMany = message(Array.from({ length: MAX_OBSERVATIONS_PER_MESSAGE + 1 }, (_, i) => observation(`${i}`)));
    const big = observation('big');
    const tooLarge = message([{ ...big, auction: { ...big.auction, description: 'x'.repeat(MAX_OBSERVATION_ARRAY_BYTES) } }]);
    const atTheBound = message(Array.from({ length: MAX_OBSERVATIONS_PER_MESSAGE }, (_, i) => observation(`${i}`)));
    const outcome = await handle(p.processor, [empty, tooMany, tooLarge, atTheBound]);
    expect(p.batches.map((b) => b.length)).toEqual([MAX_OBSERVATIONS_PER_MESSAGE]);
    expect(letters(outcome)).toEqual([
      { message: empty, reason: 'empty array: a message carries at least one observation', body: undefined, index: undefined },
      { message: tooMany, reason: expect.stringMatching(/^too many observations: 1001, /), body: undefined, index: undefined },
      { message: tooLarge, reason: expect.stringMatching(/^message too large: \d+ bytes/), body: undefined, index: undefined },
    ]);
  });

  it('throws when the processor throws: the good and the bad of the messages come back together', async () => {
    const p = processor(() => Promise.reject(new Error('database down')));
    await expect(handle(p.processor, [message([observation('1'), 'bad'])])).rejects.toThrow('database down');
  });

  it('records the outcome of each element of an array message of an ingest run, as <message id>/<index>', async () => {
    const p = processor(async () => result({ pendingIndexes: [1] }));
    const outcome = await handle(p.processor, [
      runMessage([observation('1'), observation('2'), 'bad'], 'page-1'),
      runMessage([observation('3')], 'page-2'),
      runMessage([], 'page-3'),
    ]);
    await outcome.beforeAck?.();
    expect(p.recorded).toEqual([
      [
        { runId: 'run-1', messageId: 'page-1/0', outcome: 'applied' },
        { runId: 'run-1', messageId: 'page-1/1', outcome: 'pending' },
        { runId: 'run-1', messageId: 'page-1/2', outcome: 'rejected' },
        { runId: 'run-1', messageId: 'page-2/0', outcome: 'applied' },
        { runId: 'run-1', messageId: 'page-3', outcome: 'rejected' },
      ],
    ]);
  });
});

describe('decodeMessage', () => {
  it('refuses an oversize array before parsing it (leading whitespace included); a single object is judged by its schema', () => {
    const huge = Buffer.from(` \n[${'1,'.repeat(MAX_OBSERVATION_ARRAY_BYTES / 2)}1]`);
    const parse = jest.spyOn(JSON, 'parse');
    try {
      expect(decodeMessage(message(huge.toString()))).toEqual({ ok: false, reason: expect.stringMatching(/^message too large: /) });
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
    const big = observation('big');
    const single = decodeMessage(message({ ...big, auction: { ...big.auction, description: 'x'.repeat(MAX_OBSERVATION_ARRAY_BYTES) } }));
    expect(single).toMatchObject({ ok: true, array: false, parts: [{ ok: false, reason: expect.stringMatching(/auction\.description/) }] });
  });

  it('decodes one observation or an array, each element validated', () => {
    const one = decodeMessage(message(observation('1')));
    expect(one).toMatchObject({ ok: true, array: false, parts: [{ ok: true, value: { source_auction_id: '1' } }] });
    const two = decodeMessage(message([observation('1'), {}]));
    expect(two).toMatchObject({ ok: true, array: true, parts: [{ ok: true }, { ok: false, value: {} }] });
  });

  it('is what the handler uses when the message was decoded on delivery', async () => {
    const p = processor();
    const batch = message([observation('1')]);
    const decoded = decodeMessage(batch);
    const seen: ConsumeMessage[] = [];
    await observationBatchHandler(p.processor, (m) => (seen.push(m), decoded))([batch], context);
    expect(seen).toEqual([batch]);
    expect(ids(p)).toEqual([['1']]);
  });
});

describe('ObservationConsumer', () => {
  it('is not connected before it starts, and counts nothing yet', () => {
    const consumer = new ObservationConsumer(processor().processor, { url: 'amqp://unused' });
    expect(consumer.isConnected()).toBe(false);
    expect(consumer.stats).toEqual({ received: 0, acked: 0, deadLettered: 0, batches: 0 });
  });
});
