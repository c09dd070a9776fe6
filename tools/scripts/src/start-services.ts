import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createDataSource } from '@cars/persistence';
import { migrateAndLoadReference } from '@cars/service-change-detector';

/**
 * `npm run start:services`: the production topology on one machine — migrations and the reference
 * catalog once (as the migrations Job does), then
 * every app as its own process against DATABASE_URL and RABBITMQ_URL. Ctrl-C stops them all.
 */
const APPS: { name: string; env?: Record<string, string> }[] = [
  { name: 'query', env: { HEALTH_PORT: '3101' } },
  { name: 'stats', env: { HEALTH_PORT: '3102' } },
  { name: 'webhooks', env: { HEALTH_PORT: '3103' } },
  { name: 'change-detector', env: { HEALTH_PORT: '3104' } },
  { name: 'delivery-worker', env: { HEALTH_PORT: '3105' } },
  { name: 'gateway' },
];

async function main(): Promise<void> {
  const { DATABASE_URL, RABBITMQ_URL } = process.env;
  if (!DATABASE_URL || !RABBITMQ_URL) {
    console.error('start:services needs DATABASE_URL and RABBITMQ_URL (e.g. postgres://postgres@127.0.0.1:5432/cars and amqp://guest:guest@127.0.0.1:5672).');
    process.exit(2);
  }
  const dataSource = await createDataSource({ url: DATABASE_URL, poolSize: 2, applicationName: 'migrate' }).initialize();
  await migrateAndLoadReference(dataSource);
  await dataSource.destroy();

  const children: ChildProcess[] = [];
  let stopping = false;
  const stopAll = (code: number) => {
    if (stopping) return;
    stopping = true;
    for (const child of children) child.kill('SIGTERM');
    setTimeout(() => process.exit(code), 5000).unref();
    void Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r))))).then(
      () => process.exit(code),
    );
  };
  const only = process.argv.slice(2);
  for (const app of APPS.filter((a) => only.length === 0 || only.includes(a.name))) {
    const main = join(__dirname, '..', '..', '..', 'apps', app.name, 'src', 'main.js');
    const child = spawn(process.execPath, [main], { env: { ...process.env, ...app.env }, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('exit', (code, signal) => {
      if (!stopping) {
        console.error(`${app.name} exited (${signal ?? code}); stopping the others`);
        stopAll(1);
      }
    });
    children.push(child);
  }
  process.once('SIGINT', () => stopAll(0));
  process.once('SIGTERM', () => stopAll(0));
}

main().catch((error: unknown) => {
  console.error(`start:services: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
