import 'reflect-metadata';
import { DeliveryEnv, exitOnBootFailure, runWorker } from '@cars/runtime';
import { DeliveryModule, DeliveryWakeup, EventIntakeService } from '@cars/service-delivery';

runWorker({
  name: 'delivery-worker',
  env: DeliveryEnv,
  module: (env) =>
    DeliveryModule.forRoot({
      rabbitmqUrl: env.RABBITMQ_URL,
      databaseUrl: env.DATABASE_URL,
      secretKeys: env.WEBHOOK_SECRET_KEY,
      allowPrivateDestinations: env.WEBHOOK_ALLOW_PRIVATE_DESTINATIONS === 'true',
      retryDelaysMs: env.DELIVERY_RETRY_DELAYS_MS?.split(',').map(Number),
      receiverTimeoutMs: env.DELIVERY_RECEIVER_TIMEOUT_MS,
      leaseMs: env.DELIVERY_LEASE_MS,
      concurrency: env.DELIVERY_CONCURRENCY,
      perEndpointConcurrency: env.DELIVERY_ENDPOINT_CONCURRENCY,
      accountConcurrency: env.DELIVERY_ACCOUNT_CONCURRENCY,
      circuitFailures: env.DELIVERY_CIRCUIT_FAILURES,
      circuitBackoffMs: env.DELIVERY_CIRCUIT_BACKOFF_MS,
      circuitMaxBackoffMs: env.DELIVERY_CIRCUIT_MAX_BACKOFF_MS,
      sweepIntervalMs: env.DELIVERY_SWEEP_INTERVAL_MS,
    }),
  probes: [EventIntakeService, DeliveryWakeup],
}).catch(exitOnBootFailure);
