import 'reflect-metadata';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { MicroserviceOptions } from '@nestjs/microservices';
import { Queues } from '@cars/contracts';
import { collectProcessMetrics } from '@cars/metrics';
import { InProcessBus, InProcessServer, MessagingConfig, MessagingModule, rpcServerOptions } from '@cars/messaging';
import { createDataSource, DatabaseModule, runMigrations } from '@cars/persistence';
import {
  AccountAreaEnv,
  createLogger,
  DATA_DIR,
  exitOnBootFailure,
  loadEnv,
  onShutdownSignal,
  PinoNestLogger,
  resolveWebhookSecretKey,
  startEmbeddedDatabase,
  StandaloneEnv,
  WebhooksSettingsEnv,
  writeLocalInstance,
} from '@cars/runtime';
import { ChangeDetectorModule, ObservationProcessor } from '@cars/service-change-detector';
import { DeliveryModule } from '@cars/service-delivery';
import { closeGatewayApp, createGatewayApp, GatewayModule } from '@cars/service-gateway';
import { QueryModule } from '@cars/service-query';
import { StatsModule } from '@cars/service-stats';
import { WebhooksModule } from '@cars/service-webhooks';
import { prepareData } from './first-start';
import { startIngestEndpoint } from './ingest-endpoint';

/**
 * Quick start: every service in one process. Without DATABASE_URL it embeds PostgreSQL under
 * .data/; without RABBITMQ_URL it carries the same message patterns in-process.
 */
async function main(): Promise<void> {
  const started = Date.now();
  const env = loadEnv(StandaloneEnv);
  collectProcessMetrics();
  const webhooks = loadEnv(WebhooksSettingsEnv);
  const webhookSecretKey = resolveWebhookSecretKey();
  const log = createLogger('standalone', env.LOG_LEVEL);

  let stopDatabase: (() => Promise<void>) | undefined;
  let databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) {
    const embedded = await startEmbeddedDatabase(join(DATA_DIR, 'pg'), env.EMBEDDED_DATABASE_PORT, (m) => log.warn(m));
    databaseUrl = embedded.url;
    stopDatabase = embedded.stop;
  }

  const setup = createDataSource({ url: databaseUrl, poolSize: 4, applicationName: 'standalone-setup' });
  await setup.initialize();
  await runMigrations(setup);

  const bus = new InProcessBus();
  const messaging: MessagingConfig = env.RABBITMQ_URL
    ? { transport: 'rmq', url: env.RABBITMQ_URL, rpcTimeoutMs: env.RPC_TIMEOUT_MS }
    : { transport: 'in-process', bus, rpcTimeoutMs: env.RPC_TIMEOUT_MS };

  @Module({
    imports: [
      DatabaseModule.forRoot({ url: databaseUrl, poolSize: env.DATABASE_POOL_SIZE, applicationName: 'standalone' }),
      MessagingModule.forRoot(messaging),
      GatewayModule,
      QueryModule,
      StatsModule,
      WebhooksModule.forRoot({
        secretKeys: webhookSecretKey,
        allowPrivateDestinations: webhooks.WEBHOOK_ALLOW_PRIVATE_DESTINATIONS === 'true',
        planSweepIntervalMs: webhooks.WEBHOOK_PLAN_SWEEP_INTERVAL_MS,
      }),
      // With a broker: consume observations and relay events like the separate apps do.
      // Without one: the processor serves the loopback ingest endpoint below.
      ChangeDetectorModule.forRoot(env.RABBITMQ_URL ? { rabbitmqUrl: env.RABBITMQ_URL, databaseUrl } : { databaseUrl }),
      // The database drives the delivery worker; RabbitMQ, when there is one, only wakes it.
      DeliveryModule.forRoot({
        rabbitmqUrl: env.RABBITMQ_URL,
        databaseUrl,
        secretKeys: webhookSecretKey,
        allowPrivateDestinations: webhooks.WEBHOOK_ALLOW_PRIVATE_DESTINATIONS === 'true',
      }),
    ],
  })
  class StandaloneModule {}

  const app = await createGatewayApp(StandaloneModule, { logger: new PinoNestLogger(log) });
  if (env.RABBITMQ_URL) {
    for (const queue of [Queues.QueryRpc, Queues.StatsRpc, Queues.WebhooksRpc]) {
      app.connectMicroservice<MicroserviceOptions>(rpcServerOptions(env.RABBITMQ_URL, queue, { redeliverOnCrash: queue !== Queues.WebhooksRpc }));
    }
  } else {
    app.connectMicroservice<MicroserviceOptions>({ strategy: new InProcessServer(bus) });
  }
  await app.startAllMicroservices();

  const data = await prepareData(setup, { loadDemoData: env.LOAD_DEMO_DATA === 'true', log });
  const ingest = await startIngestEndpoint(app.get(ObservationProcessor), log);
  await app.listen(env.PORT, env.HOST);
  const baseUrl = `http://${env.HOST === '0.0.0.0' ? '127.0.0.1' : env.HOST}:${env.PORT}`;
  writeLocalInstance({ pid: process.pid, databaseUrl, baseUrl, ingestUrl: ingest.url });

  const lines = [
    '',
    `Classic Car Auction Data API is up at ${baseUrl} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
    `  database: ${env.DATABASE_URL ? 'DATABASE_URL' : `embedded PostgreSQL in .data/pg (port ${env.EMBEDDED_DATABASE_PORT})`}`,
    `  broker:   ${env.RABBITMQ_URL ? 'RABBITMQ_URL' : 'in-process'}`,
    '',
    'Try:',
    `  curl ${baseUrl}/makes`,
    `  curl '${baseUrl}/models?make=Porsche'`,
    `  open ${baseUrl}/docs`,
    `  open ${baseUrl}/console   (account console: sign up; ${loadEnv(AccountAreaEnv).SMTP_URL ? 'verification mail goes out over SMTP_URL' : 'the email verification link is printed here'})`,
    ...data.messages,
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);

  const stop = async () => {
    await data.cancel();
    await ingest.close();
    await closeGatewayApp(app);
    await setup.destroy().catch(() => undefined);
    await stopDatabase?.();
    process.exit(0);
  };
  onShutdownSignal(stop, { name: 'standalone', deadlineMs: env.SHUTDOWN_DEADLINE_MS });
  await data.background;
}

main().catch(exitOnBootFailure);
