import { DynamicModule, LoggerService, Module, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { INestMicroservice } from '@nestjs/common';
import { MicroserviceOptions } from '@nestjs/microservices';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Queues } from '@cars/contracts';
import { MessagingModule, rpcServerOptions } from '@cars/messaging';
import { DatabaseModule } from '@cars/persistence';
import { ApiAccessConfig, ApiAccessConfigModule, createGatewayApp, GatewayEdgeSettings, GatewayModule } from '@cars/service-gateway';
import { QueryModule } from '@cars/service-query';
import { StatsModule } from '@cars/service-stats';
import { WebhooksModule, WebhooksOptions } from '@cars/service-webhooks';

export interface TestStack {
  /** Base URL of the gateway, e.g. http://127.0.0.1:41234 */
  url: string;
  gateway: NestFastifyApplication;
  services: INestMicroservice[];
  close(): Promise<void>;
}

const silentLogger = { log() {}, error() {}, warn() {}, debug() {}, verbose() {} };

export interface TestGatewayOptions {
  gatewayImports?: Type<unknown>[];
  /** API access settings (Redis, burst limit, key cache, metering switch) instead of the environment. */
  access?: Partial<ApiAccessConfig>;
  /** The gateway's logger (default: silent). */
  logger?: LoggerService;
  /** Another database than the run's (e.g. one from `createIsolatedDatabase`). */
  databaseUrl?: string;
  /** The HTTP edge's settings (trusted proxies, timeouts) instead of the environment's. */
  edge?: Partial<GatewayEdgeSettings>;
}

/** The webhooks service as the tests run it: the run's master key, and whatever the test overrides. */
export function testWebhooksModule(options: Partial<WebhooksOptions> = {}): DynamicModule {
  return WebhooksModule.forRoot({ secretKeys: process.env.WEBHOOK_SECRET_KEY!, ...options });
}

/**
 * The gateway and the RPC services in this process, talking over the run's real RabbitMQ vhost
 * and PostgreSQL database: what the distributed topology does, without spawning processes.
 */
export async function startTestStack(
  options: { services?: { queue: string; module: Type<unknown> | DynamicModule }[]; webhooks?: Partial<WebhooksOptions> } & TestGatewayOptions = {},
): Promise<TestStack> {
  const databaseUrl = options.databaseUrl ?? process.env.DATABASE_URL!;
  const rabbitUrl = process.env.RABBITMQ_URL!;
  const serviceDefs = options.services ?? [
    { queue: Queues.QueryRpc, module: QueryModule },
    { queue: Queues.StatsRpc, module: StatsModule },
    { queue: Queues.WebhooksRpc, module: testWebhooksModule(options.webhooks) },
  ];

  const services: INestMicroservice[] = [];
  for (const def of serviceDefs) {
    @Module({ imports: [DatabaseModule.forRoot({ url: databaseUrl, poolSize: 4 }), def.module] })
    class ServiceRoot {}
    const service = await NestFactory.createMicroservice<MicroserviceOptions>(ServiceRoot, {
      ...rpcServerOptions(rabbitUrl, def.queue),
      logger: silentLogger,
    });
    await service.listen();
    services.push(service);
  }

  const { url, gateway } = await startTestGateway(options);

  return {
    url,
    gateway,
    services,
    async close() {
      await gateway.close();
      for (const service of services) await service.close();
    },
  };
}

/**
 * One more gateway over the run's database and RabbitMQ vhost (e.g. a second replica next to
 * a stack's). Close it with `gateway.close()`.
 */
export async function startTestGateway(options: TestGatewayOptions = {}): Promise<{ url: string; gateway: NestFastifyApplication }> {
  const databaseUrl = options.databaseUrl ?? process.env.DATABASE_URL!;
  const rabbitUrl = process.env.RABBITMQ_URL!;
  @Module({
    imports: [
      DatabaseModule.forRoot({ url: databaseUrl, poolSize: 4 }),
      MessagingModule.forRoot({ transport: 'rmq', url: rabbitUrl, rpcTimeoutMs: 4000 }),
      GatewayModule,
      // Leases close 250 ms after their last request (the default keeps them 10 s, for slow
      // clients): the ledger then shows every unit settled, none reserved, soon after a test's
      // last request (`settledUsage`).
      ApiAccessConfigModule.forRoot({ leaseIdleMs: 250, ...options.access }),
      ...(options.gatewayImports ?? []),
    ],
  })
  class GatewayRoot {}
  const gateway = await createGatewayApp(GatewayRoot, { logger: options.logger ?? silentLogger, edge: options.edge });
  await gateway.listen(0, '127.0.0.1');
  const url = (await gateway.getUrl()).replace('[::1]', '127.0.0.1');
  return { url, gateway };
}
