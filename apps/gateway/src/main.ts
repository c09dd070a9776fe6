import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { MessagingModule } from '@cars/messaging';
import { collectProcessMetrics } from '@cars/metrics';
import { DatabaseModule } from '@cars/persistence';
import { createLogger, exitOnBootFailure, GatewayEnv, loadEnv, onShutdownSignal, PinoNestLogger } from '@cars/runtime';
import { closeGatewayApp, createGatewayApp, GatewayModule } from '@cars/service-gateway';

async function main(): Promise<void> {
  const env = loadEnv(GatewayEnv);
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
  await app.listen(env.PORT, env.HOST);
  console.log(JSON.stringify({ level: 'info', service: 'gateway', msg: `listening on ${await app.getUrl()}` }));
  onShutdownSignal(
    async () => {
      await closeGatewayApp(app);
      process.exit(0);
    },
    { name: 'gateway', deadlineMs: env.SHUTDOWN_DEADLINE_MS },
  );
}

main().catch(exitOnBootFailure);
