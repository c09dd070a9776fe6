import 'reflect-metadata';
import { Queues } from '@cars/contracts';
import { exitOnBootFailure, runRpcService, WebhooksEnv } from '@cars/runtime';
import { WebhooksModule } from '@cars/service-webhooks';

runRpcService({
  name: 'webhooks',
  queue: Queues.WebhooksRpc,
  env: WebhooksEnv,
  module: (env) =>
    WebhooksModule.forRoot({
      secretKeys: env.WEBHOOK_SECRET_KEY,
      allowPrivateDestinations: env.WEBHOOK_ALLOW_PRIVATE_DESTINATIONS === 'true',
      planSweepIntervalMs: env.WEBHOOK_PLAN_SWEEP_INTERVAL_MS,
    }),
}).catch(exitOnBootFailure);
