import { DynamicModule, Module } from '@nestjs/common';
import { Queues } from '@cars/contracts';
import { InProcessBus } from './in-process.transport';
import { QueueInspector } from './queue-inspector';
import { InProcessServiceClient, RmqServiceClient, ServiceClient } from './service-client';

export const QUERY_CLIENT = Symbol('QUERY_CLIENT');
export const STATS_CLIENT = Symbol('STATS_CLIENT');
export const WEBHOOKS_CLIENT = Symbol('WEBHOOKS_CLIENT');

export type MessagingConfig =
  | { transport: 'rmq'; url: string; rpcTimeoutMs: number }
  | { transport: 'in-process'; bus: InProcessBus; rpcTimeoutMs: number };

const SERVICES = [
  { token: QUERY_CLIENT, name: 'query', queue: Queues.QueryRpc },
  { token: STATS_CLIENT, name: 'stats', queue: Queues.StatsRpc },
  { token: WEBHOOKS_CLIENT, name: 'webhooks', queue: Queues.WebhooksRpc },
] as const;

/** Provides one ServiceClient per service for the gateway, over the configured transport. */
@Module({})
export class MessagingModule {
  static forRoot(config: MessagingConfig): DynamicModule {
    // One connection for the readiness detail's queue checks, shared by the three clients.
    const inspector = config.transport === 'rmq' ? new QueueInspector(config.url) : undefined;
    const providers = SERVICES.map(({ token, name, queue }) => ({
      provide: token,
      useFactory: async (): Promise<ServiceClient> => {
        if (config.transport === 'in-process') {
          return new InProcessServiceClient(name, config.bus, config.rpcTimeoutMs);
        }
        const client = new RmqServiceClient(name, config.url, queue, config.rpcTimeoutMs, inspector);
        await client.connect();
        return client;
      },
    }));
    return { module: MessagingModule, global: true, providers, exports: providers.map((p) => p.provide) };
  }
}
