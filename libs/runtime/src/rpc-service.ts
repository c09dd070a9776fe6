import { DynamicModule, Logger, Module, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MicroserviceOptions } from '@nestjs/microservices';
import { collectProcessMetrics } from '@cars/metrics';
import { DatabaseModule } from '@cars/persistence';
import { rpcServerOptions } from '@cars/messaging';
import { DataSource } from 'typeorm';
import { loadEnv } from './env';
import { setHeapGrowth } from './heap';
import { ServiceEnv } from './config';
import { HealthServer } from './health-server';
import { createLogger, PinoNestLogger } from './logger';
import { onShutdownSignal } from './process-utils';

export interface RpcServiceDefinition<E extends ServiceEnv = ServiceEnv> {
  /** Name in logs. */
  name: string;
  /** The RPC queue the service consumes. */
  queue: string;
  /** The service lib's root module, or an arrow function of the validated environment that configures it. */
  module: Type<unknown> | ((env: E) => DynamicModule);
  /** The environment class validated at boot (default ServiceEnv). */
  env?: new () => E;
  /**
   * Its handlers only read: a request held by a replica that dies goes back to the queue for
   * another (see RpcServerSettings). Leave it off for services whose handlers change things.
   */
  readOnly?: boolean;
}

/**
 * Boots one service of the distributed topology: its module behind an RPC queue on RabbitMQ,
 * a database pool, and /health endpoints on HEALTH_PORT. Stops cleanly on SIGTERM/SIGINT.
 */
export async function runRpcService<E extends ServiceEnv = ServiceEnv>(definition: RpcServiceDefinition<E>): Promise<void> {
  const env = loadEnv(definition.env ?? (ServiceEnv as new () => E));
  const serviceModule = isModuleClass(definition.module) ? definition.module : definition.module(env);
  const logger = new PinoNestLogger(createLogger(definition.name, env.LOG_LEVEL));
  setHeapGrowth(env.HEAP_GROWING_PERCENT);
  collectProcessMetrics();

  @Module({
    imports: [
      DatabaseModule.forRoot({ url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE, applicationName: definition.name }),
      serviceModule,
    ],
  })
  class RootModule {}

  const app = await NestFactory.createMicroservice<MicroserviceOptions>(
    RootModule,
    { ...rpcServerOptions(env.RABBITMQ_URL, definition.queue, { redeliverOnCrash: definition.readOnly ?? false }), logger },
  );
  let brokerUp = false;
  app.status.subscribe((status) => {
    brokerUp = status === 'connected';
  });
  const db = app.get(DataSource);
  const health = new HealthServer(async () => ({
    database: await db.query('SELECT 1').then(() => 'up' as const, () => 'down' as const),
    broker: brokerUp ? 'up' : 'down',
  }));
  const port = await health.listen(env.HEALTH_PORT);
  await app.listen();
  new Logger(definition.name).log(`${definition.name} consuming ${definition.queue}; health on :${port}`);

  const stop = async () => {
    await app.close();
    await health.close();
    process.exit(0);
  };
  onShutdownSignal(stop, { name: definition.name, deadlineMs: env.SHUTDOWN_DEADLINE_MS });
}

function isModuleClass<E>(module: Type<unknown> | ((env: E) => DynamicModule)): module is Type<unknown> {
  // A module class has a prototype; the configuring function is an arrow function, which has none.
  return (module as { prototype?: unknown }).prototype !== undefined;
}
