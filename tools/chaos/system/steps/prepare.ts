import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createAccount } from '@cars/accounts';
import { createDataSource, pgPoolOf } from '@cars/persistence';
import { Pool } from 'pg';
import { createDatabase, createVhost, log, ROOT } from '../../common/infra';
import { Arrival, ReceiverRoute, startReceivers } from '../../common/receivers';
import { state } from '../cleanup';
import { CLUSTER, FAULTS } from '../options';
import { clusterUrls } from '../../common/cluster';

const run = promisify(execFile);

/** What the drill runs in and on: its database and vhost, two accounts, the webhook receivers. */
export interface Drill {
  started: number;
  id: string;
  tag: string;
  logDir: string;
  databaseUrl: string;
  /** The cluster profile: the same database on the streaming replica (query and stats read there). */
  readDatabaseUrl?: string;
  rabbitUrl: string;
  pool: Pool;
  loadAccount: Awaited<ReturnType<typeof createAccount>>;
  subscriber: Awaited<ReturnType<typeof createAccount>>;
  loadKey: string;
  hooksKey: string;
  routes: Map<string, ReceiverRoute>;
  arrivals: Arrival[];
  problems: string[];
  receiversPort: number;
}

/** A database (migrated) and a vhost of the drill's own, its accounts, and the receivers started. */
export async function prepareDrill(): Promise<Drill> {
  const started = Date.now();
  const id = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const name = `cars_chaos_${CLUSTER ? 'cluster' : 'system'}_${id}`;
  const tag = `chaos-${id}`;
  const logDir = mkdtempSync(join(tmpdir(), `cars-chaos-${CLUSTER ? 'cluster' : 'system'}-`));
  log(`faults: ${FAULTS.map((f) => f.id).join(', ') || '(none)'}; app logs in ${logDir}`);

  state.databaseName = name;
  const databaseUrl = await createDatabase(name);
  state.vhost = name;
  const rabbitUrl = createVhost(name);
  await run(process.execPath, [join(ROOT, 'dist', 'tools', 'admin', 'src', 'main.js'), 'db:migrate'], {
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
  });
  const pool = new Pool({ connectionString: databaseUrl, max: 3 });
  pool.on('error', () => undefined);
  state.closers.push(() => pool.end());

  // Two accounts on the 100K plan: one for the API load (its own ledger), one that owns the webhooks.
  const setup = await createDataSource({ url: databaseUrl, poolSize: 1 }).initialize();
  const loadAccount = await createAccount(pgPoolOf(setup), { email: `chaos-load-${randomUUID()}@example.test`, plan: '100k', emailVerified: true });
  const subscriber = await createAccount(pgPoolOf(setup), { email: `chaos-hooks-${randomUUID()}@example.test`, plan: '100k', emailVerified: true });
  await setup.destroy();

  const routes = new Map<string, ReceiverRoute>();
  const arrivals: Arrival[] = [];
  const problems: string[] = [];
  const receivers = await startReceivers(routes, arrivals, problems);
  state.closers.push(receivers.close);

  return {
    started,
    id,
    tag,
    logDir,
    databaseUrl,
    readDatabaseUrl: CLUSTER ? clusterUrls(name, name).readDatabase : undefined,
    rabbitUrl,
    pool,
    loadAccount,
    subscriber,
    loadKey: loadAccount.key.apiKey,
    hooksKey: subscriber.key.apiKey,
    routes,
    arrivals,
    problems,
    receiversPort: receivers.port,
  };
}
