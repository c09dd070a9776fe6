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
  setHeapGrowth,
  startEmbeddedDatabase,
  StandaloneEnv,
  Startup,
  StartupStopped,
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
async function main(startup: Startup): Promise<void> {
  const started = Date.now();
  const env = loadEnv(StandaloneEnv);
  setHeapGrowth(env.HEAP_GROWING_PERCENT);
  collectProcessMetrics();
  const webhooks = loadEnv(WebhooksSettingsEnv);
  const webhookSecretKey = resolveWebhookSecretKey();
  const log = createLogger('standalone', env.LOG_LEVEL);
  // From the first step on, Ctrl-C stops cleanly: the step in progress ends, what is open closes.
  onShutdownSignal(
    async () => {
      await startup.stop();
      process.exit(0);
    },
    { name: 'standalone', deadlineMs: env.SHUTDOWN_DEADLINE_MS },
  );

  // Registered first, stopped last: everything else uses it.
  let databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) {
    databaseUrl = await startup.step(async () => {
      const embedded = await startEmbeddedDatabase(join(DATA_DIR, 'pg'), env.EMBEDDED_DATABASE_PORT, (m) => log.warn(m));
      startup.onStop(embedded.stop);
      return embedded.url;
    });
  }

  const setup = createDataSource({ url: databaseUrl, poolSize: 4, applicationName: 'standalone-setup' });
  await startup.step(async () => {
    await setup.initialize();
    startup.onStop(() => setup.destroy().catch(() => undefined));
    await runMigrations(setup);
  });

  const bus = new InProcessBus();
  const messaging: MessagingConfig = env.RABBITMQ_URL
    ? { transport: 'rmq', url: env.RABBITMQ_URL, rpcTimeoutMs: env.RPC_TIMEOUT_MS }
    : { transport: 'in-process', bus, rpcTimeoutMs: env.RPC_TIMEOUT_MS };
  const url = databaseUrl;

  @Module({
    imports: [
      DatabaseModule.forRoot({ url, poolSize: env.DATABASE_POOL_SIZE, applicationName: 'standalone' }),
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
      ChangeDetectorModule.forRoot(env.RABBITMQ_URL ? { rabbitmqUrl: env.RABBITMQ_URL, databaseUrl: url } : { databaseUrl: url }),
      // The database drives the delivery worker; RabbitMQ, when there is one, only wakes it.
      DeliveryModule.forRoot({
        rabbitmqUrl: env.RABBITMQ_URL,
        databaseUrl: url,
        secretKeys: webhookSecretKey,
        allowPrivateDestinations: webhooks.WEBHOOK_ALLOW_PRIVATE_DESTINATIONS === 'true',
      }),
    ],
  })
  class StandaloneModule {}

  // The application's listeners, consumers and pools close before the setup pool and the database.
  const app = await startup.step(async () => {
    const created = await createGatewayApp(StandaloneModule, { logger: new PinoNestLogger(log) });
    startup.onStop(() => closeGatewayApp(created));
    return created;
  });
  await startup.step(async () => {
    if (env.RABBITMQ_URL) {
      for (const queue of [Queues.QueryRpc, Queues.StatsRpc, Queues.WebhooksRpc]) {
        app.connectMicroservice<MicroserviceOptions>(rpcServerOptions(env.RABBITMQ_URL, queue, { redeliverOnCrash: queue !== Queues.WebhooksRpc }));
      }
    } else {
      app.connectMicroservice<MicroserviceOptions>({ strategy: new InProcessServer(bus) });
    }
    await app.startAllMicroservices();
  });

  const data = await startup.step(async () => {
    const prepared = await prepareData(setup, { loadDemoData: env.LOAD_DEMO_DATA === 'true', log });
    startup.onStop(prepared.cancel);
    return prepared;
  });
  const ingest = await startup.step(async () => {
    const endpoint = await startIngestEndpoint(app.get(ObservationProcessor), log);
    startup.onStop(endpoint.close);
    return endpoint;
  });
  await startup.step(() => app.listen(env.PORT, env.HOST));
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
    ...webhookReceiverLines(webhooks.WEBHOOK_ALLOW_PRIVATE_DESTINATIONS === 'true'),
    ...data.messages,
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  await data.background;
}

/** Where webhooks may go, and the switch that allows a local receiver: the first thing a receiver's author tries. */
function webhookReceiverLines(allowPrivate: boolean): string[] {
  if (allowPrivate) {
    return [
      '',
      '  !! WEBHOOK_ALLOW_PRIVATE_DESTINATIONS=true: webhook endpoints may be http://, localhost and private addresses.',
      '  !! For local receivers in development only; never in production. A receiver that verifies and prints each event:',
      '       WEBHOOK_SECRET=whsec_... PORT=8080 npm run example:receiver   (endpoint URL http://127.0.0.1:8080/webhooks)',
    ];
  }
  return [
    '',
    '  webhooks: endpoints must be public https:// URLs. For a local receiver (http://127.0.0.1:8080/…), restart with',
    '       WEBHOOK_ALLOW_PRIVATE_DESTINATIONS=true npm start',
  ];
}

const startup = new Startup();
main(startup).catch((error: unknown) => {
  // A stop during the start finishes on its own (and exits 0).
  if (error instanceof StartupStopped || startup.stopped) return;
  exitOnBootFailure(error);
});
