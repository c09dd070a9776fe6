import { Logger } from '@nestjs/common';
import type { ChannelWrapper, CreateChannelOpts } from 'amqp-connection-manager';
import type { ConfirmChannel, ConsumeMessage, MessageProperties, Options } from 'amqplib';
import { BatchConsumer, BatchConsumerOptions, BatchContext, BatchOutcome, ConsumerConnection } from './batch-consumer';

/** One channel as the broker sees it: an unknown tag, or a multiple ack covering nothing, is an error. */
class FakeChannel {
  private next = 1;
  readonly unacked = new Set<number>();
  readonly frames: string[] = [];
  prefetchCount?: number;
  /** The prefetch of each consumer started on the channel, in turn (a weighted consumer starts a new one to change it). */
  readonly consumerPrefetch: number[] = [];
  readonly cancelled: string[] = [];
  private onMessage?: (message: ConsumeMessage | null) => void;
  consuming?: string;
  private consumers = 0;

  async prefetch(count: number, global = false): Promise<void> {
    // As a quorum queue: a channel-wide prefetch closes the connection.
    if (global) throw new Error('NOT_IMPLEMENTED - queue does not support global qos');
    this.prefetchCount = count;
  }

  async consume(queue: string, onMessage: (message: ConsumeMessage | null) => void): Promise<{ consumerTag: string }> {
    this.consuming = queue;
    this.onMessage = onMessage;
    this.consumerPrefetch.push(this.prefetchCount ?? 0);
    this.consumers += 1;
    return { consumerTag: `test-${this.consumers}` };
  }

  async cancel(tag: string): Promise<void> {
    this.cancelled.push(tag);
  }

  /** Hands the consumer one message; returns it. */
  deliver(body = 'm', properties: Partial<MessageProperties> = {}): ConsumeMessage {
    if (!this.onMessage) throw new Error('nobody consumes on this channel');
    const tag = this.next++;
    this.unacked.add(tag);
    const message = { fields: { deliveryTag: tag }, content: Buffer.from(body), properties: { headers: {}, ...properties } };
    this.onMessage(message as unknown as ConsumeMessage);
    return message as unknown as ConsumeMessage;
  }

  deliverMany(n: number): ConsumeMessage[] {
    return Array.from({ length: n }, (_, i) => this.deliver(`m${i}`));
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
    if (allUpTo) throw new Error('unexpected nack mode');
    if (!this.unacked.delete(tag)) throw new Error(`PRECONDITION_FAILED - unknown delivery tag ${tag}`);
    this.frames.push(requeue ? `nack ${tag}` : `reject ${tag}`);
  }
}

interface Published {
  queue: string;
  body: string;
  options: Options.Publish;
}

/** amqp-connection-manager's side: channels whose setup runs on each (re)connect, and publishing. */
class FakeBroker {
  readonly channels: FakeChannel[] = [];
  readonly published: Published[] = [];
  /** How a publish is confirmed (tests replace it with a slow or failing one). */
  confirm: (published: Published) => Promise<void> = async () => undefined;
  connected = true;
  closed = false;
  private readonly setups: ((channel: ConfirmChannel) => Promise<void>)[] = [];

  readonly connect = (): ConsumerConnection => {
    const connection = {
      on: () => connection,
      reconnect: () => undefined,
      isConnected: () => this.connected && !this.closed,
      close: async () => {
        this.closed = true;
      },
      createChannel: (options: CreateChannelOpts = {}) => {
        const setup = options.setup as (channel: ConfirmChannel) => Promise<void>;
        this.setups.push(setup);
        const ready = this.open(setup);
        const wrapper = {
          waitForConnect: () => ready,
          sendToQueue: async (queue: string, content: Buffer, publishOptions: Options.Publish) => {
            const published = { queue, body: content.toString(), options: publishOptions };
            await this.confirm(published);
            this.published.push(published);
            return true;
          },
          close: async () => undefined,
          on: () => wrapper,
          addSetup: async () => undefined,
        };
        return wrapper as unknown as ChannelWrapper;
      },
    };
    return connection as unknown as ConsumerConnection;
  };

  /** The channel the consumer currently consumes on. */
  get consumer(): FakeChannel {
    const channel = [...this.channels].reverse().find((c) => c.consuming);
    if (!channel) throw new Error('not consuming');
    return channel;
  }

  /** A reconnect: every channel's setup runs again on a fresh channel. */
  async reconnect(): Promise<void> {
    for (const setup of this.setups) await this.open(setup);
  }

  private async open(setup: (channel: ConfirmChannel) => Promise<void>): Promise<void> {
    const channel = new FakeChannel();
    this.channels.push(channel);
    await setup(channel as unknown as ConfirmChannel);
  }
}

interface Batch {
  messages: readonly ConsumeMessage[];
  context: BatchContext;
  resolve: (outcome?: BatchOutcome) => void;
  reject: (error: Error) => void;
}

/** A started consumer whose batches finish when the test says so. */
async function started(options: Partial<BatchConsumerOptions> = {}) {
  const broker = new FakeBroker();
  const batches: Batch[] = [];
  const topologies: unknown[] = [];
  const consumer = new BatchConsumer({
    name: 'test',
    url: 'amqp://fake',
    queue: 'work',
    topology: async (channel) => topologies.push(channel),
    handle: (messages, context) =>
      new Promise<BatchOutcome | undefined>((resolve, reject) => batches.push({ messages, context, resolve, reject })),
    batchSize: 3,
    concurrency: 2,
    deadLetter: { queue: 'work.dead', reasonHeader: 'x-reason', rejectedAtHeader: 'x-rejected-at' },
    connect: broker.connect,
    ...options,
  });
  await consumer.start();
  return { broker, consumer, batches, topologies, channel: broker.consumer };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
const bodies = (messages: readonly ConsumeMessage[]) => messages.map((m) => m.content.toString());

beforeAll(() => Logger.overrideLogger(false));
afterEach(() => jest.useRealTimers());

describe('BatchConsumer', () => {
  describe('setup', () => {
    it('declares the topology on both channels and consumes the queue with a prefetch of batchSize × (concurrency + 1)', async () => {
      const { broker, consumer, topologies, channel } = await started({ batchSize: 10, concurrency: 2 });
      expect(topologies).toHaveLength(2);
      expect(channel.consuming).toBe('work');
      expect(channel.prefetchCount).toBe(30);
      expect(consumer.isConnected()).toBe(true);
      broker.connected = false;
      expect(consumer.isConnected()).toBe(false);
    });

    it('takes an explicit prefetch, and needs no publishing channel without a dead-letter queue', async () => {
      const { topologies, channel } = await started({ prefetch: 7, deadLetter: undefined });
      expect(channel.prefetchCount).toBe(7);
      expect(topologies).toHaveLength(1);
    });
  });

  describe('batching', () => {
    it('starts a batch as soon as batchSize messages arrived', async () => {
      const { channel, batches } = await started({ batchSize: 3 });
      channel.deliverMany(2);
      expect(batches).toHaveLength(0);
      channel.deliver('third');
      expect(batches).toHaveLength(1);
      expect(bodies(batches[0].messages)).toEqual(['m0', 'm1', 'third']);
    });

    it('starts a smaller batch once the first message has waited maxWaitMs', async () => {
      jest.useFakeTimers();
      const { channel, batches } = await started({ batchSize: 10, maxWaitMs: 50 });
      channel.deliver('a');
      await jest.advanceTimersByTimeAsync(30);
      channel.deliver('b');
      await jest.advanceTimersByTimeAsync(19);
      expect(batches).toHaveLength(0);
      await jest.advanceTimersByTimeAsync(1);
      expect(batches.map((b) => bodies(b.messages))).toEqual([['a', 'b']]);
    });

    it('without a window, starts on the next turn with what one read brought, and gathers while every slot is busy', async () => {
      const { channel, batches } = await started({ batchSize: 10, concurrency: 1 });
      channel.deliver('a');
      channel.deliver('b');
      expect(batches).toHaveLength(0);
      await new Promise((resolve) => setImmediate(resolve));
      expect(batches.map((b) => bodies(b.messages))).toEqual([['a', 'b']]);
      channel.deliver('c');
      await new Promise((resolve) => setImmediate(resolve));
      channel.deliver('d');
      await new Promise((resolve) => setImmediate(resolve));
      // The only slot is busy: c and d wait together, and start the moment it is free.
      expect(batches).toHaveLength(1);
      batches[0].resolve();
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(batches.map((b) => bodies(b.messages))).toEqual([['a', 'b'], ['c', 'd']]);
    });

    it('runs at most `concurrency` batches at once and starts the next when one finishes', async () => {
      const { channel, batches, consumer } = await started({ batchSize: 2, concurrency: 2 });
      channel.deliverMany(7);
      expect(batches.map((b) => b.messages.length)).toEqual([2, 2]);
      batches[1].resolve();
      await settle();
      expect(batches.map((b) => b.messages.length)).toEqual([2, 2, 2]);
      batches[0].resolve();
      await settle();
      expect(batches.map((b) => b.messages.length)).toEqual([2, 2, 2, 1]);
      expect(consumer.stats).toMatchObject({ received: 7, batches: 2 });
    });
    it('with spareSlotWeight, starts a batch beside one in flight only once that much weight waits', async () => {
      const { channel, batches } = await started({ batchSize: 10, concurrency: 2, spareSlotWeight: 3 });
      const turn = () => new Promise((resolve) => setImmediate(resolve));
      channel.deliver('a');
      await turn();
      // Idle: the first batch starts at once, whatever it weighs.
      expect(batches.map((b) => bodies(b.messages))).toEqual([['a']]);
      channel.deliver('b');
      await turn();
      channel.deliver('c');
      await turn();
      // One batch in flight and only 2 waiting: the spare slot stays shut, b and c gather.
      expect(batches).toHaveLength(1);
      channel.deliver('d');
      await turn();
      // 3 waiting: the spare slot takes them.
      expect(batches.map((b) => bodies(b.messages))).toEqual([['a'], ['b', 'c', 'd']]);
      channel.deliver('e');
      await turn();
      expect(batches).toHaveLength(2);
      // b–d done, a (small) still in flight: e alone is still too little for a second batch.
      batches[1].resolve();
      await settle();
      expect(batches).toHaveLength(2);
      // Nothing in flight: what waits starts, however little.
      batches[0].resolve();
      await settle();
      expect(batches.map((b) => bodies(b.messages))).toEqual([['a'], ['b', 'c', 'd'], ['e']]);
    });

    it('with spareSlotWeight, opens the spare slot for anything beside a batch that weighs that much', async () => {
      const { channel, batches } = await started({ batchSize: 10, concurrency: 2, spareSlotWeight: 3 });
      const turn = () => new Promise((resolve) => setImmediate(resolve));
      channel.deliverMany(4);
      await turn();
      expect(batches.map((b) => b.messages.length)).toEqual([4]);
      // The batch in flight is heavy (4 ≥ 3): a lone message does not wait behind it.
      channel.deliver('x');
      await turn();
      expect(batches.map((b) => b.messages.length)).toEqual([4, 1]);
    });

    it('with weigh, closes a batch once its messages weigh batchSize (a heavy message alone)', async () => {
      const weigh = (message: ConsumeMessage) => Number(message.content.toString());
      const { channel, batches } = await started({ batchSize: 10, concurrency: 3, weigh });
      channel.deliver('4');
      channel.deliver('5');
      expect(batches).toHaveLength(0);
      channel.deliver('3');
      // 4 + 5 fit, the 3 would not: it starts the next batch, a free slot taking what is buffered.
      expect(batches.map((b) => bodies(b.messages))).toEqual([['4', '5'], ['3']]);
      channel.deliver('30');
      expect(batches.map((b) => bodies(b.messages))).toEqual([['4', '5'], ['3'], ['30']]);
    });
  });

  describe('prefetch by weight', () => {
    const weigh = (message: ConsumeMessage) => Number(message.content.toString());

    /** Delivers one message of each weight, letting a change of prefetch (cancel, re-consume) finish after each. */
    async function deliverWeights(channel: FakeChannel, weights: number[]): Promise<void> {
      for (const weight of weights) {
        channel.deliver(String(weight));
        await settle();
      }
    }

    it('starts the consumer at concurrency + 1 messages, as if each weighed a batch, and opens up for light ones', async () => {
      const { channel } = await started({ batchSize: 100, concurrency: 2, weigh });
      expect(channel.consumerPrefetch).toEqual([3]);
      await deliverWeights(channel, Array(80).fill(1));
      const window = channel.consumerPrefetch;
      // Each change by more than a fifth starts a new consumer, rising towards 300 messages (the consumer's own prefetch).
      expect(window.length).toBeGreaterThan(3);
      expect(channel.cancelled).toEqual(window.slice(1).map((_, i) => `test-${i + 1}`));
      expect(window).toEqual([...window].sort((a, b) => a - b));
      expect(window[window.length - 1]).toBeGreaterThan(150);
      expect(window[window.length - 1]).toBeLessThanOrEqual(300);
    });

    it('keeps the window near prefetchWeight / weight for heavy messages', async () => {
      const { channel } = await started({ batchSize: 100, concurrency: 2, weigh, prefetchWeight: 1000 });
      expect(channel.consumerPrefetch).toEqual([10]);
      await deliverWeights(channel, Array(40).fill(100));
      expect(channel.consumerPrefetch).toEqual([10]);
      await deliverWeights(channel, Array(40).fill(500));
      expect(channel.consumerPrefetch[channel.consumerPrefetch.length - 1]).toBe(3);
    });

    it('never asks for a channel-wide prefetch (quorum queues refuse one), and keeps one consumer without weigh', async () => {
      const { channel } = await started();
      channel.deliverMany(10);
      await settle();
      expect(channel.consumerPrefetch).toEqual([9]);
      expect(channel.cancelled).toEqual([]);
    });
  });

  describe('acknowledgements', () => {
    it('acknowledges a batch with one multiple ack', async () => {
      const { channel, batches, consumer } = await started({ batchSize: 4 });
      channel.deliverMany(4);
      batches[0].resolve();
      await settle();
      expect(channel.frames).toEqual(['ack 4 multiple']);
      expect(channel.unacked.size).toBe(0);
      expect(consumer.stats).toMatchObject({ received: 4, acked: 4, batches: 1 });
    });

    it('holds back a batch finishing before an earlier one still in flight, then covers both', async () => {
      const { channel, batches, consumer } = await started();
      channel.deliverMany(6);
      batches[1].resolve();
      await settle();
      expect(channel.frames).toEqual([]);
      expect(consumer.stats.acked).toBe(0);
      batches[0].resolve();
      await settle();
      expect(channel.frames).toEqual(['ack 6 multiple']);
      expect(consumer.stats.acked).toBe(6);
    });

    it('acks the earlier batch alone while a later one is in flight', async () => {
      const { channel, batches } = await started();
      channel.deliverMany(6);
      batches[0].resolve();
      await settle();
      expect(channel.frames).toEqual(['ack 3 multiple']);
      expect([...channel.unacked]).toEqual([4, 5, 6]);
      batches[1].resolve();
      await settle();
      expect(channel.frames).toEqual(['ack 3 multiple', 'ack 6 multiple']);
    });

    it('acks on each channel separately after a reconnect', async () => {
      const { broker, batches, consumer } = await started({ batchSize: 2 });
      const before = broker.consumer;
      before.deliver();
      await broker.reconnect();
      const after = broker.consumer;
      expect(after).not.toBe(before);
      after.deliver();
      before.deliver();
      after.deliver();
      batches[1].resolve();
      batches[0].resolve();
      await settle();
      expect(before.frames).toEqual(['ack 2 multiple']);
      expect(after.frames).toEqual(['ack 2 multiple']);
      expect(consumer.stats.acked).toBe(4);
    });

    it('survives a closed channel (the broker redelivers)', async () => {
      const { channel, batches, consumer } = await started({ batchSize: 2 });
      channel.deliverMany(2);
      channel.ack = () => {
        throw new Error('Channel closed');
      };
      batches[0].resolve();
      await settle();
      expect(consumer.stats.acked).toBe(0);
      channel.deliverMany(2);
      expect(batches).toHaveLength(2);
    });
  });

  describe('dead letters', () => {
    it('publishes each refused message to the dead-letter queue with its reason and original properties, then acks the batch', async () => {
      const { broker, channel, batches, consumer } = await started({ batchSize: 3 });
      channel.deliver('ok');
      const refused = channel.deliver('bad', {
        messageId: 'msg-42',
        timestamp: 1764000000,
        correlationId: 'corr-1',
        contentType: 'text/plain',
        type: 'kind',
        appId: 'producer',
        headers: { 'x-trace-id': 'trace-abc' },
      });
      channel.deliver('ok too');
      batches[0].resolve({ deadLetters: [{ message: refused, reason: 'not what we expected' }] });
      await settle();
      expect(broker.published).toHaveLength(1);
      const [letter] = broker.published;
      expect(letter).toMatchObject({
        queue: 'work.dead',
        body: 'bad',
        options: {
          persistent: true,
          messageId: 'msg-42',
          timestamp: 1764000000,
          correlationId: 'corr-1',
          contentType: 'text/plain',
          type: 'kind',
          appId: 'producer',
          headers: { 'x-trace-id': 'trace-abc', 'x-reason': 'not what we expected', 'x-rejected-at': expect.any(String) },
        },
      });
      expect(Number.isNaN(Date.parse(String(letter.options.headers?.['x-rejected-at'])))).toBe(false);
      expect(channel.frames).toEqual(['ack 3 multiple']);
      expect(consumer.stats).toMatchObject({ acked: 3, deadLettered: 1 });
    });

    it('cuts a long reason to 2000 characters', async () => {
      const { broker, channel, batches } = await started({ batchSize: 1 });
      const message = channel.deliver();
      batches[0].resolve({ deadLetters: [{ message, reason: 'x'.repeat(5000) }] });
      await settle();
      expect(String(broker.published[0].options.headers?.['x-reason'])).toHaveLength(2000);
    });

    it('keeps a delivery awaiting dead-lettering from being acked by another batch', async () => {
      let confirm!: () => void;
      const { broker, channel, batches, consumer } = await started();
      broker.confirm = () => new Promise<void>((resolve) => (confirm = resolve));
      const messages = channel.deliverMany(6);
      batches[0].resolve({ deadLetters: [{ message: messages[1], reason: 'refused' }] });
      batches[1].resolve();
      await settle();
      expect(channel.frames).toEqual([]);
      confirm();
      await settle();
      expect(channel.frames).toEqual(['ack 6 multiple']);
      expect(consumer.stats).toMatchObject({ acked: 6, deadLettered: 1 });
    });

    it('requeues the refused ones one by one when dead-lettering fails, and acks the rest', async () => {
      const { broker, channel, batches, consumer } = await started({ batchSize: 4 });
      broker.confirm = () => Promise.reject(new Error('no route'));
      const messages = channel.deliverMany(4);
      batches[0].resolve({
        deadLetters: [
          { message: messages[1], reason: 'refused' },
          { message: messages[3], reason: 'refused' },
        ],
      });
      await settle();
      expect(channel.frames).toEqual(['nack 2', 'nack 4', 'ack 3 multiple']);
      expect(channel.unacked.size).toBe(0);
      expect(consumer.stats).toMatchObject({ acked: 2, deadLettered: 0 });
    });

    it('runs beforeAck after the dead letters are published and before the ack; not when publishing failed', async () => {
      const { broker, channel, batches } = await started({ batchSize: 2 });
      const seen: string[] = [];
      const beforeAck = async () => {
        seen.push(`published ${broker.published.length}, frames ${channel.frames.length}`);
      };
      const first = channel.deliverMany(2);
      batches[0].resolve({ deadLetters: [{ message: first[0], reason: 'refused' }], beforeAck });
      await settle();
      expect(seen).toEqual(['published 1, frames 0']);
      expect(channel.frames).toEqual(['ack 2 multiple']);

      broker.confirm = () => Promise.reject(new Error('no route'));
      const second = channel.deliverMany(2);
      batches[1].resolve({ deadLetters: [{ message: second[0], reason: 'refused' }], beforeAck });
      await settle();
      expect(seen).toHaveLength(1);
      expect(channel.frames).toEqual(['ack 2 multiple', 'nack 3', 'ack 4 multiple']);
    });

    it('acks anyway when beforeAck fails', async () => {
      const { channel, batches } = await started({ batchSize: 1 });
      channel.deliver();
      batches[0].resolve({ beforeAck: () => Promise.reject(new Error('bookkeeping down')) });
      await settle();
      expect(channel.frames).toEqual(['ack 1 multiple']);
    });

    it('dead-letters the refused parts of a message, each with its own body and headers, and counts the message once', async () => {
      const { broker, channel, batches, consumer } = await started({ batchSize: 2 });
      const [whole, parts] = [channel.deliver('[1,2,3]', { messageId: 'batch-7' }), channel.deliver('bad')];
      batches[0].resolve({
        deadLetters: [
          { message: whole, reason: 'first refused', content: Buffer.from('1'), headers: { 'x-index': 0 } },
          { message: whole, reason: 'third refused', content: Buffer.from('3'), headers: { 'x-index': 2 } },
          { message: parts, reason: 'all of it' },
          { message: parts, reason: 'all of it, again' },
        ],
      });
      await settle();
      expect(broker.published.map((p) => [p.body, p.options.headers?.['x-reason'], p.options.headers?.['x-index'], p.options.messageId])).toEqual([
        ['1', 'first refused', 0, 'batch-7'],
        ['3', 'third refused', 2, 'batch-7'],
        ['bad', 'all of it', undefined, undefined],
      ]);
      expect(channel.frames).toEqual(['ack 2 multiple']);
      expect(consumer.stats).toMatchObject({ acked: 2, deadLettered: 2 });
    });

    it('rejects refused messages to the broker when it has no dead-letter queue', async () => {
      const { broker, channel, batches, consumer } = await started({ batchSize: 3, deadLetter: undefined });
      const messages = channel.deliverMany(3);
      batches[0].resolve({ deadLetters: [{ message: messages[2], reason: 'refused' }] });
      await settle();
      expect(broker.published).toEqual([]);
      expect(channel.frames).toEqual(['reject 3', 'ack 2 multiple']);
      expect(consumer.stats).toMatchObject({ acked: 2, deadLettered: 1 });
    });
  });

  describe('when the handler throws', () => {
    it('requeues the whole batch after the backoff, then acks a later batch that waited for it', async () => {
      jest.useFakeTimers();
      const { channel, batches, consumer } = await started({ retry: { baseMs: 400, maxMs: 10_000 } });
      channel.deliverMany(6);
      batches[1].resolve();
      batches[0].reject(new Error('database down'));
      await jest.advanceTimersByTimeAsync(399);
      expect(channel.frames).toEqual([]);
      await jest.advanceTimersByTimeAsync(1);
      expect(channel.frames).toEqual(['nack 1', 'nack 2', 'nack 3', 'ack 6 multiple']);
      expect(channel.unacked.size).toBe(0);
      expect(consumer.stats).toMatchObject({ acked: 3, batches: 1 });
    });

    it('doubles the pause over consecutive failures and starts again from the base after a success', async () => {
      jest.useFakeTimers();
      const { channel, batches } = await started({ batchSize: 1, concurrency: 1, retry: { baseMs: 100, maxMs: 1000 } });
      const requeuedAfter = async (batch: number): Promise<number> => {
        const before = channel.frames.length;
        batches[batch].reject(new Error('database down'));
        let waited = 0;
        while (channel.frames.length === before) {
          await jest.advanceTimersByTimeAsync(10);
          waited += 10;
        }
        return waited;
      };
      channel.deliverMany(5);
      expect(await requeuedAfter(0)).toBe(100);
      expect(await requeuedAfter(1)).toBe(200);
      expect(await requeuedAfter(2)).toBe(400);
      batches[3].resolve();
      await jest.advanceTimersByTimeAsync(0);
      expect(await requeuedAfter(4)).toBe(100);
    });
  });

  describe('stop', () => {
    it('lets the batches in flight finish and be acked, then closes; takes nothing new meanwhile', async () => {
      const { broker, channel, batches, consumer } = await started({ batchSize: 2 });
      channel.deliverMany(4);
      let stopped = false;
      const stopping = consumer.stop().then(() => (stopped = true));
      await settle();
      expect(stopped).toBe(false);
      expect(batches.every((b) => b.context.signal.aborted)).toBe(true);
      channel.deliverMany(2);
      batches[0].resolve();
      await settle();
      expect(stopped).toBe(false);
      batches[1].resolve();
      await stopping;
      expect(batches).toHaveLength(2);
      expect(channel.frames).toEqual(['ack 2 multiple', 'ack 4 multiple']);
      expect(broker.closed).toBe(true);
      expect(consumer.isConnected()).toBe(false);
      expect(consumer.stats).toMatchObject({ received: 4, acked: 4 });
    });

    it('lets every caller of stop() wait for the same drain', async () => {
      const { channel, batches, consumer } = await started({ batchSize: 1 });
      channel.deliver();
      const done: string[] = [];
      const first = consumer.stop().then(() => done.push('first'));
      const second = consumer.stop().then(() => done.push('second'));
      await settle();
      expect(done).toEqual([]);
      batches[0].resolve();
      await Promise.all([first, second]);
      expect(done.sort()).toEqual(['first', 'second']);
      expect(channel.frames).toEqual(['ack 1 multiple']);
    });

    it('requeues at once a batch whose handler gives up on stop', async () => {
      jest.useFakeTimers();
      const { channel, batches, consumer } = await started({ batchSize: 2 });
      channel.deliverMany(2);
      batches[0].context.signal.addEventListener('abort', () => batches[0].reject(new Error('stopping')));
      await consumer.stop();
      expect(channel.frames).toEqual(['nack 1', 'nack 2']);
    });

    it('drops what is buffered and not started, and can start again', async () => {
      jest.useFakeTimers();
      const { broker, channel, batches, consumer } = await started({ batchSize: 3, maxWaitMs: 50 });
      channel.deliver();
      await consumer.stop();
      await jest.advanceTimersByTimeAsync(100);
      expect(batches).toHaveLength(0);
      broker.closed = false;
      await consumer.start();
      broker.consumer.deliver('again');
      await jest.advanceTimersByTimeAsync(50);
      expect(batches.map((b) => bodies(b.messages))).toEqual([['again']]);
    });
  });
});
