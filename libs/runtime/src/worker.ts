import { DynamicModule, INestApplicationContext, Logger, Module, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { collectProcessMetrics } from '@cars/metrics';
import { DatabaseModule } from '@cars/persistence';
import { DataSource } from 'typeorm';
import { ServiceEnv } from './config';
import { loadEnv } from './env';
import { setHeapGrowth } from './heap';
import { HealthServer } from './health-server';
import { createLogger, PinoNestLogger } from './logger';
import { onShutdownSignal } from './process-utils';

/** Something a worker depends on, reported by its readiness endpoint. */
export interface ReadinessProbe {
  name: string;
  isUp(): boolean | Promise<boolean>;
  /** Figures shown beside the checks (e.g. a backlog), never deciding readiness. */
  detail?(): Record<string, unknown> | Promise<Record<string, unknown>>;
}

export interface WorkerDefinition<E extends ServiceEnv> {
  name: string;
  /** The app's environment class (ServiceEnv plus its own variables). */
  env?: new () => E;
  module: (env: E) => Type<unknown> | DynamicModule;
  /** Providers (by class) of the module that report readiness, e.g. a broker connection. */
  probes?: Type<ReadinessProbe>[];
}

/**
 * Boots a worker of the distributed topology (no RPC queue, no public HTTP): its module with a
 * database pool, /health endpoints on HEALTH_PORT, clean stop on SIGTERM/SIGINT.
 */
export async function runWorker<E extends ServiceEnv>(definition: WorkerDefinition<E>): Promise<INestApplicationContext> {
  const env = loadEnv(definition.env ?? (ServiceEnv as new () => E));
  const logger = new PinoNestLogger(createLogger(definition.name, env.LOG_LEVEL));
  setHeapGrowth(env.HEAP_GROWING_PERCENT);
  collectProcessMetrics();

  @Module({
    imports: [
      DatabaseModule.forRoot({ url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE, applicationName: definition.name }),
      definition.module(env),
    ],
  })
  class RootModule {}

  const app = await NestFactory.createApplicationContext(RootModule, { logger });
  await app.init();
  const db = app.get(DataSource);
  const probes = (definition.probes ?? []).map((probe) => app.get(probe));
  const health = new HealthServer(async () => {
    const checks: Record<string, 'up' | 'down'> = {
      database: await db.query('SELECT 1').then(() => 'up' as const, () => 'down' as const),
    };
    for (const probe of probes) checks[probe.name] = (await probe.isUp()) ? 'up' : 'down';
    return checks;
  }, async () => {
    const detail: Record<string, unknown> = {};
    for (const probe of probes) Object.assign(detail, await probe.detail?.());
    return detail;
  });
  const port = await health.listen(env.HEALTH_PORT);
  new Logger(definition.name).log(`${definition.name} started; health on :${port}`);

  const stop = async () => {
    await app.close();
    await health.close();
    process.exit(0);
  };
  onShutdownSignal(stop, { name: definition.name, deadlineMs: env.SHUTDOWN_DEADLINE_MS });
  return app;
}
