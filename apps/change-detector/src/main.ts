import 'reflect-metadata';
import { IsIn } from 'class-validator';
import { exitOnBootFailure, IntSetting, runWorker, ServiceEnv } from '@cars/runtime';
import { ChangeDetectorModule, ChangeDetectorRuntime } from '@cars/service-change-detector';

class ChangeDetectorEnv extends ServiceEnv {
  /** Observations applied per transaction. */
  @IntSetting(1, 5000) OBSERVATION_BATCH_SIZE: number = 1000;
  /** Batches in flight at once. */
  @IntSetting(1, 16) OBSERVATION_CONCURRENCY: number = 2;
  /** What this process does: consume observations, relay the outbox, or both (scale them apart). */
  @IsIn(['all', 'consumer', 'relay']) CHANGE_DETECTOR_ROLE: 'all' | 'consumer' | 'relay' = 'all';
}

runWorker({
  name: 'change-detector',
  env: ChangeDetectorEnv,
  module: (env) =>
    ChangeDetectorModule.forRoot({
      rabbitmqUrl: env.RABBITMQ_URL,
      databaseUrl: env.DATABASE_URL,
      consumer:
        env.CHANGE_DETECTOR_ROLE === 'relay'
          ? false
          : { batchSize: env.OBSERVATION_BATCH_SIZE, concurrency: env.OBSERVATION_CONCURRENCY },
      relay: env.CHANGE_DETECTOR_ROLE === 'consumer' ? false : {},
    }),
  probes: [ChangeDetectorRuntime],
}).catch(exitOnBootFailure);
