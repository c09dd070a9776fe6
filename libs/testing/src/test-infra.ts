import { execFileSync } from 'node:child_process';
import { processIsAlive } from '@cars/runtime';
import { Client } from 'pg';

/** Where the machine's servers are; the test run makes its own database and vhost on them. */
export const TEST_POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const TEST_RABBITMQ_BASE_URL = process.env.TEST_RABBITMQ_BASE_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

export function databaseUrlFor(name: string): string {
  const url = new URL(TEST_POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function adminQuery(sql: string): Promise<void> {
  const client = new Client({ connectionString: TEST_POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function createDatabase(name: string): Promise<string> {
  await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await adminQuery(`CREATE DATABASE "${name}"`);
  return databaseUrlFor(name);
}

export async function dropDatabase(name: string): Promise<void> {
  await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}

function rabbitmqctl(...args: string[]): void {
  execFileSync('rabbitmqctl', args, { stdio: 'ignore', timeout: 30000 });
}

/** Owner pid of a test run's database or vhost name (`cars_test_<pid>_<time>[_suffix]`). */
function ownerPid(name: string): number | null {
  const match = /^cars_test_(\d+)_/.exec(name);
  return match ? Number(match[1]) : null;
}

/**
 * Drops the databases and vhosts of earlier runs whose process is gone (a run killed before its
 * teardown), so a machine never accumulates them.
 */
export async function removeAbandonedRuns(): Promise<void> {
  const client = new Client({ connectionString: TEST_POSTGRES_ADMIN_URL });
  await client.connect();
  let names: string[];
  try {
    const rows = await client.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE 'cars\\_test\\_%'`);
    names = rows.rows.map((r) => r.datname);
  } finally {
    await client.end();
  }
  for (const name of names) {
    const pid = ownerPid(name);
    if (pid !== null && !processIsAlive(pid)) await dropDatabase(name);
  }
  let vhosts: string[] = [];
  try {
    vhosts = execFileSync('rabbitmqctl', ['-q', 'list_vhosts'], { encoding: 'utf8', timeout: 30000 })
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line.startsWith('cars_test_'));
  } catch {
    return;
  }
  for (const vhost of vhosts) {
    const pid = ownerPid(vhost);
    if (pid !== null && !processIsAlive(pid)) deleteVhost(vhost);
  }
}

/** A vhost of its own isolates a test run's queues and exchanges. */
export function createVhost(name: string): string {
  try {
    rabbitmqctl('delete_vhost', name);
  } catch {
    // did not exist
  }
  rabbitmqctl('add_vhost', name);
  rabbitmqctl('set_permissions', '-p', name, 'guest', '.*', '.*', '.*');
  return `${TEST_RABBITMQ_BASE_URL}/${encodeURIComponent(name)}`;
}

export function deleteVhost(name: string): void {
  try {
    rabbitmqctl('delete_vhost', name);
  } catch {
    // already gone
  }
}
