import { deleteVhost, dropDatabase } from './test-infra';

export default async function globalTeardown(): Promise<void> {
  const runId = process.env.TEST_RUN_ID;
  if (!runId) return;
  await dropDatabase(runId);
  deleteVhost(runId);
}
