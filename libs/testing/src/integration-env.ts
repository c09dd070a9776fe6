// Runs in each integration test file before it loads: fail loudly if the global setup's
// database and vhost are not there, rather than touching some other database.
if (!process.env.TEST_RUN_ID || !process.env.DATABASE_URL?.includes(process.env.TEST_RUN_ID)) {
  throw new Error('Integration specs must run through `npm test` (jest global setup makes their database).');
}
process.env.LOG_LEVEL ??= 'silent';
