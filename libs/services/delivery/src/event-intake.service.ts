import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { assertEventTopology, RMQ_SOCKET_OPTIONS } from '@cars/messaging';
import amqp, { AmqpConnectionManager, ChannelWrapper } from 'amqp-connection-manager';
import type { ReadinessProbe } from '@cars/runtime';


/**
 * The delivery worker's side of the broker: keeps the durable event topology declared, so
 * events published by the change-detector's outbox relay wait in `delivery.events` (durable)
 * for the dispatcher.
 */
@Injectable()
export class EventIntakeService implements OnModuleInit, OnApplicationShutdown, ReadinessProbe {
  readonly name = 'broker';
  private readonly logger = new Logger(EventIntakeService.name);
  private connection?: AmqpConnectionManager;
  private channel?: ChannelWrapper;

  constructor(private readonly url: string) {}

  async onModuleInit(): Promise<void> {
    this.connection = amqp.connect([this.url], RMQ_SOCKET_OPTIONS);
    this.connection.on('disconnect', ({ err }) => this.logger.warn(`broker disconnected: ${String(err)}`));
    this.channel = this.connection.createChannel({ json: false, setup: assertEventTopology });
    await this.channel.waitForConnect();
  }

  isUp(): boolean {
    return this.connection?.isConnected() ?? false;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.channel?.close();
    await this.connection?.close();
  }
}
