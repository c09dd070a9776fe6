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
  /** Backstop: parked observations whose context arrived are replayed at least this often (ms). */
  @IntSetting(200, 3_600_000) PENDING_REPLAY_INTERVAL_MS: number = 30_000;
  /** A pending backlog older than this is logged as stuck (ms). */
  @IntSetting(1000, 86_400_000) PENDING_STUCK_AFTER_MS: number = 600_000;
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
      pendingReplay:
        env.CHANGE_DETECTOR_ROLE === 'relay'
          ? false
          : { intervalMs: env.PENDING_REPLAY_INTERVAL_MS, stuckAfterMs: env.PENDING_STUCK_AFTER_MS },
    }),
  probes: [ChangeDetectorRuntime],
}).catch(exitOnBootFailure);
