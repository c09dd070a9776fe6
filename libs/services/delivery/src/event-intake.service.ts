import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Queues } from '@cars/contracts';
import { assertEventTopology, RMQ_SOCKET_OPTIONS } from '@cars/messaging';
import amqp, { AmqpConnectionManager, ChannelWrapper } from 'amqp-connection-manager';
import type { Channel, ConsumeMessage } from 'amqplib';
import type { ReadinessProbe } from '@cars/runtime';
import { DELIVERY_OPTIONS, ResolvedDeliveryOptions } from './config/delivery.options';
import { FanOutService } from './fan-out/fan-out.service';

/** Messages taken from `delivery.events` before their acks (each is only a wake-up). */
const PREFETCH = 500;

/**
 * `delivery.events` wakes the fan-out: the events table is the truth, so a message is acked once a
 * fan-out pass that started after it arrived has committed — by then its event's deliveries exist.
 * A message redelivered after a crash only wakes a pass that finds nothing left to do.
 */
@Injectable()
export class EventIntakeService implements OnModuleInit, OnApplicationShutdown, ReadinessProbe {
  readonly name = 'broker';
  private readonly logger = new Logger(EventIntakeService.name);
  private connection?: AmqpConnectionManager;
  private channel?: ChannelWrapper;

  constructor(
    private readonly fanOut: FanOutService,
    @Inject(DELIVERY_OPTIONS) private readonly options: ResolvedDeliveryOptions,
  ) {}

  async onModuleInit(): Promise<void> {
    if (!this.options.rabbitmqUrl) return;
    this.connection = amqp.connect([this.options.rabbitmqUrl], RMQ_SOCKET_OPTIONS);
    this.connection.on('disconnect', ({ err }) => this.logger.warn(`broker disconnected: ${String(err)}`));
    this.channel = this.connection.createChannel({
      json: false,
      setup: async (channel: Channel) => {
        await assertEventTopology(channel);
        await channel.prefetch(PREFETCH);
        await channel.consume(Queues.DeliveryEvents, (message) => message && this.received(channel, message));
      },
    });
    await this.channel.waitForConnect();
  }

  private received(channel: Channel, message: ConsumeMessage): void {
    void this.fanOut.pass().then(() => {
      try {
        channel.ack(message);
      } catch {
        // The channel closed meanwhile: the message comes back and wakes another pass.
      }
    });
  }

  isUp(): boolean {
    return this.options.rabbitmqUrl ? (this.connection?.isConnected() ?? false) : true;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.channel?.close();
    await this.connection?.close();
  }
}
