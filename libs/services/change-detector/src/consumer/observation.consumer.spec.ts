import { Logger } from '@nestjs/common';
import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import type { ObservationProcessor, ProcessResult } from '../observations/observation.processor';
import { ObservationConsumer } from './observation.consumer';

const OBSERVATION = JSON.stringify({
  source: 'bringatrailer',
  source_auction_id: '1',
  observed_at: '2026-11-21T12:00:03Z',
  auction: { status: 'active', price: 5, currency: 'USD' },
});

/** A channel that settles like the broker: an unknown tag, or a multiple ack covering nothing, is an error. */
class BrokerChannel {
  private next = 1;
  readonly unacked = new Set<number>();
  readonly frames: string[] = [];

  delivery(): { message: ConsumeMessage; channel: ConfirmChannel } {
    const tag = this.next++;
    this.unacked.add(tag);
    const message = { fields: { deliveryTag: tag }, content: Buffer.from(OBSERVATION), properties: { headers: {} } };
    return { message: message as unknown as ConsumeMessage, channel: this as unknown as ConfirmChannel };
  }

  ack(message: ConsumeMessage, allUpTo = false): void {
    const tag = message.fields.deliveryTag;
    const covered = allUpTo ? [...this.unacked].filter((t) => t <= tag) : this.unacked.has(tag) ? [tag] : [];
    if (!this.unacked.has(tag) || covered.length === 0) throw new Error(`PRECONDITION_FAILED - unknown delivery tag ${tag}`);
    for (const t of covered) this.unacked.delete(t);
    this.frames.push(`ack ${tag}${allUpTo ? ' multiple' : ''}`);
  }

  nack(message: ConsumeMessage, allUpTo = false, requeue = true): void {
    const tag = message.fields.deliveryTag;
    if (allUpTo || !requeue) throw new Error('unexpected nack mode');
    if (!this.unacked.delete(tag)) throw new Error(`PRECONDITION_FAILED - unknown delivery tag ${tag}`);
    this.frames.push(`nack ${tag}`);
  }
}

interface Deferred {
  size: number;
  resolve: (result: ProcessResult) => void;
  reject: (error: Error) => void;
}

const result = (rejected: ProcessResult['rejected'] = []): ProcessResult => ({
  accepted: 0,
  rejected,
  pending: 0,
  pendingIndexes: [],
  auctionsCreated: 0,
  auctionsUpdated: 0,
  bidsCreated: 0,
  events: 0,
});

/** A consumer whose batches finish when the test says so. */
function setup(options: { batchSize: number; sendToQueue?: () => Promise<void> }) {
  const batches: Deferred[] = [];
  const processor = {
    processBatch: (observations: unknown[]) =>
      new Promise<ProcessResult>((resolve, reject) => batches.push({ size: observations.length, resolve, reject })),
  } as unknown as ObservationProcessor;
  const consumer = new ObservationConsumer(processor, { url: 'amqp://unused', batchSize: options.batchSize, concurrency: 2 });
  const internals = consumer as unknown as {
    onDelivery(delivery: { message: ConsumeMessage; channel: ConfirmChannel }): void;
    publishChannel: { sendToQueue: () => Promise<void> };
  };
  internals.publishChannel = { sendToQueue: options.sendToQueue ?? (() => Promise.resolve()) };
  const deliver = (channel: BrokerChannel, n: number) => {
    for (let i = 0; i < n; i += 1) internals.onDelivery(channel.delivery());
  };
  return { consumer, batches, deliver };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

beforeAll(() => Logger.overrideLogger(false));

describe('ObservationConsumer acknowledgements', () => {
  it('acknowledges a batch with one multiple ack', async () => {
    const channel = new BrokerChannel();
    const { consumer, batches, deliver } = setup({ batchSize: 4 });
    deliver(channel, 4);
    expect(batches).toHaveLength(1);
    batches[0].resolve(result());
    await settle();
    expect(channel.frames).toEqual(['ack 4 multiple']);
    expect(channel.unacked.size).toBe(0);
    expect(consumer.stats.acked).toBe(4);
  });

  it('holds back a batch finishing before an earlier one still in flight', async () => {
    const channel = new BrokerChannel();
    const { consumer, batches, deliver } = setup({ batchSize: 3 });
    deliver(channel, 6);
    expect(batches).toHaveLength(2);
    batches[1].resolve(result());
    await settle();
    expect(channel.frames).toEqual([]);
    expect(consumer.stats.acked).toBe(0);
    batches[0].resolve(result());
    await settle();
    expect(channel.frames).toEqual(['ack 6 multiple']);
    expect(consumer.stats.acked).toBe(6);
  });

  it('acks the earlier batch alone while a later one is in flight', async () => {
    const channel = new BrokerChannel();
    const { consumer, batches, deliver } = setup({ batchSize: 3 });
    deliver(channel, 6);
    batches[0].resolve(result());
    await settle();
    expect(channel.frames).toEqual(['ack 3 multiple']);
    expect([...channel.unacked]).toEqual([4, 5, 6]);
    batches[1].resolve(result());
    await settle();
    expect(channel.frames).toEqual(['ack 3 multiple', 'ack 6 multiple']);
    expect(consumer.stats.acked).toBe(6);
  });

  it('nacks a failed batch before acking the later batch that waited for it', async () => {
    jest.useFakeTimers();
    try {
      const channel = new BrokerChannel();
      const { consumer, batches, deliver } = setup({ batchSize: 3 });
      deliver(channel, 6);
      batches[1].resolve(result());
      batches[0].reject(new Error('database down'));
      await jest.advanceTimersByTimeAsync(0);
      expect(channel.frames).toEqual([]);
      await jest.advanceTimersByTimeAsync(10000);
      expect(channel.frames).toEqual(['nack 1', 'nack 2', 'nack 3', 'ack 6 multiple']);
      expect(channel.unacked.size).toBe(0);
      expect(consumer.stats.acked).toBe(3);
    } finally {
      jest.useRealTimers();
    }
  });

  it('keeps a delivery awaiting dead-lettering from being acked by another batch', async () => {
    let publish!: () => void;
    const channel = new BrokerChannel();
    const { consumer, batches, deliver } = setup({
      batchSize: 3,
      sendToQueue: () => new Promise<void>((resolve) => (publish = resolve)),
    });
    deliver(channel, 6);
    batches[0].resolve(result([{ index: 1, reason: 'refused' }]));
    batches[1].resolve(result());
    await settle();
    expect(channel.frames).toEqual([]);
    publish();
    await settle();
    expect(channel.frames).toEqual(['ack 6 multiple']);
    expect(consumer.stats).toMatchObject({ acked: 6, deadLettered: 1 });
  });

  it('nacks the rejected ones individually when dead-lettering fails and acks the rest', async () => {
    const channel = new BrokerChannel();
    const { consumer, batches, deliver } = setup({ batchSize: 4, sendToQueue: () => Promise.reject(new Error('no route')) });
    deliver(channel, 4);
    batches[0].resolve(result([{ index: 1, reason: 'refused' }, { index: 3, reason: 'refused' }]));
    await settle();
    expect(channel.frames).toEqual(['nack 2', 'nack 4', 'ack 3 multiple']);
    expect(channel.unacked.size).toBe(0);
    expect(consumer.stats.acked).toBe(2);
  });

  it('acks on each channel separately after a reconnect', async () => {
    const before = new BrokerChannel();
    const after = new BrokerChannel();
    const { consumer, batches, deliver } = setup({ batchSize: 2 });
    deliver(before, 1);
    deliver(after, 1);
    deliver(before, 1);
    deliver(after, 1);
    batches[1].resolve(result());
    batches[0].resolve(result());
    await settle();
    expect(before.frames).toEqual(['ack 2 multiple']);
    expect(after.frames).toEqual(['ack 2 multiple']);
    expect(consumer.stats.acked).toBe(4);
  });

  it('survives a closed channel (the broker redelivers)', async () => {
    const channel = new BrokerChannel();
    const { consumer, batches, deliver } = setup({ batchSize: 2 });
    deliver(channel, 2);
    channel.ack = () => {
      throw new Error('Channel closed');
    };
    batches[0].resolve(result());
    await settle();
    expect(consumer.stats.acked).toBe(0);
  });
});
