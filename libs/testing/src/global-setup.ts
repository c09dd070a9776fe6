import { createDataSource, runMigrations } from '@cars/persistence';
import { generateMasterKey } from '@cars/signing';
import { createDatabase, createVhost, removeAbandonedRuns } from './test-infra';

/**
 * Once per `npm test`: a database and a RabbitMQ vhost of this run's own, with migrations
 * applied. Workers inherit DATABASE_URL / RABBITMQ_URL through the environment.
 */
export default async function globalSetup(): Promise<void> {
  // Databases and vhosts of runs that were killed before their teardown.
  await removeAbandonedRuns();
  const runId = `cars_test_${process.pid}_${Date.now().toString(36)}`;
  process.env.TEST_RUN_ID = runId;
  process.env.DATABASE_URL = await createDatabase(runId);
  process.env.RABBITMQ_URL = createVhost(runId);
  // The master key of webhook signing secrets for every app the tests start (in-process or spawned).
  process.env.WEBHOOK_SECRET_KEY ??= generateMasterKey();
  const dataSource = createDataSource({ url: process.env.DATABASE_URL, poolSize: 2 });
  await dataSource.initialize();
  try {
    await runMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
}
