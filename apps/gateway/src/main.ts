import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { MessagingModule } from '@cars/messaging';
import { collectProcessMetrics } from '@cars/metrics';
import { DatabaseModule } from '@cars/persistence';
import { createLogger, exitOnBootFailure, GatewayEnv, HealthServer, loadEnv, onShutdownSignal, PinoNestLogger, setHeapGrowth } from '@cars/runtime';
import { closeGatewayApp, createGatewayApp, GatewayModule, GatewayReadiness } from '@cars/service-gateway';

async function main(): Promise<void> {
  const env = loadEnv(GatewayEnv);
  setHeapGrowth(env.HEAP_GROWING_PERCENT);
  collectProcessMetrics();

  @Module({
    imports: [
      DatabaseModule.forRoot({ url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE, applicationName: 'gateway' }),
      MessagingModule.forRoot({ transport: 'rmq', url: env.RABBITMQ_URL, rpcTimeoutMs: env.RPC_TIMEOUT_MS }),
      GatewayModule,
    ],
  })
  class GatewayAppModule {}

  const app = await createGatewayApp(GatewayAppModule, {
    logger: new PinoNestLogger(createLogger('gateway', env.LOG_LEVEL)),
  });
  // /health/* and /metrics also on HEALTH_PORT when it is set: the port probes and the scraper are
  // let in to, apart from the public one (0/unset: only on PORT).
  const readiness = app.get(GatewayReadiness);
  const health = env.HEALTH_PORT > 0 ? new HealthServer(() => readiness.checks(), () => readiness.detail()) : undefined;
  const healthPort = await health?.listen(env.HEALTH_PORT);
  await app.listen(env.PORT, env.HOST);
  const healthNote = healthPort ? `; health and metrics on :${healthPort}` : '';
  console.log(JSON.stringify({ level: 'info', service: 'gateway', msg: `listening on ${await app.getUrl()}${healthNote}` }));
  onShutdownSignal(
    async () => {
      await closeGatewayApp(app);
      await health?.close();
      process.exit(0);
    },
    { name: 'gateway', deadlineMs: env.SHUTDOWN_DEADLINE_MS },
  );
}

main().catch(exitOnBootFailure);
