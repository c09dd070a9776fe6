import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { backoffDelay } from '@cars/messaging';
import { createDataSource } from '@cars/persistence';
import { migrateAndLoadReference } from '@cars/service-change-detector';
import { errorMessage } from '@cars/contracts';
import { resolveWebhookSecretKey } from '@cars/runtime';

/**
 * `npm run start:services`: the production topology on one machine — migrations and the reference
 * catalog once (as the migrations Job does), then every app as its own process against
 * DATABASE_URL and RABBITMQ_URL (and Redis, by default on 127.0.0.1), supervised as a process
 * manager would: an app that exits on its own is restarted with backoff; Ctrl-C (SIGINT) or
 * SIGTERM stops them all. `npm run start:services -- query gateway` starts only those apps.
 */
const APPS = ['query', 'stats', 'webhooks', 'change-detector', 'delivery-worker', 'gateway'] as const;

/** Restart backoff: 1 s, doubling to 30 s; an app that ran a minute starts again from 1 s. */
const BACKOFF_MS = { first: 1000, max: 30_000, stableAfter: 60_000 };
/** How long the apps get to stop before they are killed. */
const STOP_DEADLINE_MS = 15_000;

const log = (message: string) => console.error(`start:services: ${message}`);

interface Supervised {
  name: string;
  env: Record<string, string>;
  child?: ChildProcess;
  startedAt: number;
  restarts: number;
  /** Exits in a row without a stable run in between. */
  failures: number;
  timer?: NodeJS.Timeout;
}

async function main(): Promise<void> {
  const { DATABASE_URL, RABBITMQ_URL } = process.env;
  if (!DATABASE_URL || !RABBITMQ_URL) {
    console.error('start:services needs DATABASE_URL and RABBITMQ_URL (e.g. postgres://postgres@127.0.0.1:5432/cars and amqp://guest:guest@127.0.0.1:5672).');
    process.exit(2);
  }
  const dataSource = await createDataSource({ url: DATABASE_URL, poolSize: 2, applicationName: 'migrate' }).initialize();
  await migrateAndLoadReference(dataSource);
  await dataSource.destroy();

  // Burst limits are shared by the gateway replicas through Redis: on unless the operator says otherwise.
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  // A local run: the master key of signing secrets is WEBHOOK_SECRET_KEY, or the one kept under .data/.
  const webhookSecretKey = resolveWebhookSecretKey();
  const healthBase = Number(process.env.START_SERVICES_HEALTH_PORT_BASE ?? 3101);
  const only = process.argv.slice(2);
  const unknown = only.filter((name) => !(APPS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    console.error(`start:services: unknown app ${unknown.join(', ')} (apps: ${APPS.join(', ')})`);
    process.exit(2);
  }
  const apps: Supervised[] = APPS.map((name, i) => ({
    name,
    env: {
      REDIS_URL: redisUrl,
      WEBHOOK_SECRET_KEY: webhookSecretKey,
      ...(name === 'gateway' ? {} : { HEALTH_PORT: String(healthBase + i) }),
    },
    startedAt: 0,
    restarts: 0,
    failures: 0,
  })).filter((app) => only.length === 0 || only.includes(app.name));

  let stopping = false;
  const start = (app: Supervised) => {
    const main = join(__dirname, '..', '..', '..', 'apps', app.name, 'src', 'main.js');
    const child = spawn(process.execPath, [main], { env: { ...process.env, ...app.env }, stdio: ['ignore', 'inherit', 'inherit'] });
    app.child = child;
    app.startedAt = Date.now();
    log(`${app.name} started (pid ${child.pid})`);
    child.once('exit', (code, signal) => {
      app.child = undefined;
      if (stopping) return;
      // An app that ran a while starts its backoff over.
      if (Date.now() - app.startedAt >= BACKOFF_MS.stableAfter) app.failures = 0;
      app.failures += 1;
      app.restarts += 1;
      const delay = backoffDelay(app.failures, { baseMs: BACKOFF_MS.first, maxMs: BACKOFF_MS.max });
      log(`${app.name} exited (${signal ?? `code ${code}`}); restarting in ${delay} ms (restart ${app.restarts})`);
      app.timer = setTimeout(() => start(app), delay);
    });
  };

  const stopAll = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping ${apps.length} apps`);
    for (const app of apps) clearTimeout(app.timer);
    const running = apps.filter((app) => app.child);
    const force = setTimeout(() => {
      const left = running.filter((app) => app.child).map((app) => app.name);
      log(`${left.join(', ')} did not stop within ${STOP_DEADLINE_MS / 1000} s; killing`);
      for (const app of running) app.child?.kill('SIGKILL');
    }, STOP_DEADLINE_MS);
    force.unref();
    void Promise.all(
      running.map((app) => new Promise((resolve) => (app.child ? app.child.once('exit', resolve) : resolve(null)))),
    ).then(() => {
      clearTimeout(force);
      log('stopped');
      process.exit(0);
    });
    for (const app of running) app.child?.kill('SIGTERM');
  };

  for (const app of apps) start(app);
  process.once('SIGINT', () => stopAll('SIGINT'));
  process.once('SIGTERM', () => stopAll('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error(`start:services: ${errorMessage(error)}`);
  process.exit(1);
});
