import { Inject, Injectable, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { eventsOfMessage, Queues } from '@cars/contracts';
import type { ConsumeMessage } from 'amqplib';
import { assertEventTopology, BatchConsumer, BatchContext } from '@cars/messaging';
import type { ReadinessProbe } from '@cars/runtime';
import { DELIVERY_OPTIONS, ResolvedDeliveryOptions } from './config/delivery.options';
import { FanOutService } from './fan-out/fan-out.service';

/** Wake-ups answered by one fan-out pass. */
const BATCH_SIZE = 250;
/** Messages taken from `delivery.events` before their acks (each is only a wake-up). */
const PREFETCH = 500;

/**
 * `delivery.events` wakes the fan-out: the events table is the truth, so a batch of messages is
 * acked once a fan-out pass that started after they arrived has committed — by then their events'
 * deliveries exist. A message redelivered after a crash only wakes a pass that finds nothing left
 * to do. Two batches may wait at once: a wake-up arriving during a pass queues the next one.
 * Messages whose events this process has fanned out already (the database's notification woke a
 * pass first, the usual case) are acked without a pass.
 */
@Injectable()
export class EventIntakeService implements OnModuleInit, OnApplicationShutdown, ReadinessProbe {
  readonly name = 'broker';
  private consumer?: BatchConsumer;

  constructor(
    private readonly fanOut: FanOutService,
    @Inject(DELIVERY_OPTIONS) private readonly options: ResolvedDeliveryOptions,
  ) {}

  async onModuleInit(): Promise<void> {
    if (!this.options.rabbitmqUrl) return;
    this.consumer = new BatchConsumer({
      name: EventIntakeService.name,
      url: this.options.rabbitmqUrl,
      queue: Queues.DeliveryEvents,
      topology: assertEventTopology,
      handle: (messages, context) => this.fannedOut(messages, context),
      batchSize: BATCH_SIZE,
      concurrency: 2,
      prefetch: PREFETCH,
    });
    await this.consumer.start();
  }

  /**
   * Resolves once the messages' events are fanned out: at once when this process's passes did it
   * already; else after the pass under way, if that did it (the notification of their commit
   * woke it); else once a pass started now has committed.
   */
  private async fannedOut(messages: readonly ConsumeMessage[], context: BatchContext): Promise<void> {
    if (fannedAlready(this.fanOut, messages)) return;
    await this.untilStopped(this.fanOut.passUnderWay(), context);
    if (fannedAlready(this.fanOut, messages)) return;
    await this.untilStopped(this.fanOut.pass(), context);
  }

  /**
   * Waits for a pass. One that fails is retried at the next wake-up or sweep, so this may wait
   * long: on shutdown it gives up and the batch is requeued.
   */
  private async untilStopped(pass: Promise<void>, { signal }: BatchContext): Promise<void> {
    const givenUp = new Error('stopping before a fan-out pass committed');
    if (signal.aborted) throw givenUp;
    let abort: (() => void) | undefined;
    const stopped = new Promise<'stopped'>((resolve) => {
      abort = () => resolve('stopped');
      signal.addEventListener('abort', abort, { once: true });
    });
    try {
      const first = await Promise.race([pass.then(() => 'passed' as const), stopped]);
      if (first === 'stopped') throw givenUp;
    } finally {
      if (abort) signal.removeEventListener('abort', abort);
    }
  }

  isUp(): boolean {
    return this.options.rabbitmqUrl ? (this.consumer?.isConnected() ?? false) : true;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.consumer?.stop();
  }
}

/** Every event of these messages fanned out by this process's passes (a body that does not parse: not known). */
export function fannedAlready(
  fanOut: Pick<FanOutService, 'covers'>,
  messages: readonly { content: Buffer; properties: { headers?: Record<string, unknown> } }[],
): boolean {
  try {
    return messages.every((message) => fanOut.covers(eventsOfMessage(message.content, message.properties.headers).map((item) => item.seq)));
  } catch {
    return false;
  }
}
