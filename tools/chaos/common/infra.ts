/**
 * What the fault drills share about this machine's servers: where PostgreSQL and RabbitMQ are, a
 * database and a vhost of a drill's own (created at the start, removed at the end), and the two
 * server restarts (RabbitMQ `stop_app`/`start_app`, PostgreSQL `pg_ctlcluster … restart -m fast`).
 * The restarts reach every user of the servers: a drill that runs them must run alone — or on
 * servers of its own: CHAOS_ADMIN_DATABASE_URL and CHAOS_POSTGRES_CLUSTER (a `pg_lsclusters`
 * cluster name) for PostgreSQL, CHAOS_RABBITMQ_URL and CHAOS_RABBITMQ_NODE (`rabbitmqctl -n`)
 * for RabbitMQ (docs/operations.md, "Fault drill").
 */
import { execFile, execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { brokerUrls } from '@cars/messaging';
import { Pool } from 'pg';

// Read when used, not when loaded: the cluster drill sets them after loading this module.
const adminUrl = () => process.env.CHAOS_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const rabbitUrl = () => process.env.CHAOS_RABBITMQ_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const postgresCluster = () => process.env.CHAOS_POSTGRES_CLUSTER ?? 'main';
/** `rabbitmqctl` for the drill's node. */
const rabbitmqctl = (...args: string[]): string[] => [...(process.env.CHAOS_RABBITMQ_NODE ? ['-n', process.env.CHAOS_RABBITMQ_NODE] : []), ...args];
// dist/tools/chaos/<drill or common> → the repository root.
export const ROOT = join(__dirname, '..', '..', '..', '..');

const run = promisify(execFile);
const SERVER_COMMAND_TIMEOUT_MS = 120_000;

export const log = (message: string) => process.stdout.write(`[chaos] ${new Date().toISOString().slice(11, 19)} ${message}\n`);
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A drill's own database on the admin URL's server; returns its URL. */
export async function createDatabase(name: string): Promise<string> {
  const admin = new Pool({ connectionString: adminUrl(), max: 1 });
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return adminUrl().replace(/\/[^/]*$/, `/${name}`);
}

export async function dropDatabase(name: string): Promise<void> {
  const admin = new Pool({ connectionString: adminUrl(), max: 1 });
  admin.on('error', () => undefined);
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
  await admin.end().catch(() => undefined);
}

/** A drill's own vhost (guest may do everything in it); returns its AMQP URL (one per node for a cluster, comma-separated). */
export function createVhost(name: string): string {
  execFileSync('rabbitmqctl', rabbitmqctl('-q', 'add_vhost', name), { stdio: 'ignore', timeout: SERVER_COMMAND_TIMEOUT_MS });
  execFileSync('rabbitmqctl', rabbitmqctl('-q', 'set_permissions', '-p', name, 'guest', '.*', '.*', '.*'), { stdio: 'ignore', timeout: SERVER_COMMAND_TIMEOUT_MS });
  return brokerUrls(rabbitUrl())
    .map((url) => `${url}/${encodeURIComponent(name)}`)
    .join(',');
}

export function deleteVhost(name: string): void {
  try {
    execFileSync('rabbitmqctl', rabbitmqctl('-q', 'delete_vhost', name), { stdio: 'ignore', timeout: SERVER_COMMAND_TIMEOUT_MS });
  } catch {
    // already gone
  }
}

/** Restarts the RabbitMQ application of the drill's node (definitions and durable queues stay). Async: the caller's load goes on meanwhile. */
export async function restartRabbitMq(): Promise<void> {
  await run('rabbitmqctl', rabbitmqctl('-q', 'stop_app'), { timeout: SERVER_COMMAND_TIMEOUT_MS });
  await run('rabbitmqctl', rabbitmqctl('-q', 'start_app'), { timeout: SERVER_COMMAND_TIMEOUT_MS });
}

/** Restarts the drill's PostgreSQL cluster (fast mode: sessions are disconnected, nothing committed is lost). */
export async function restartPostgres(): Promise<void> {
  const version = readdirSync('/etc/postgresql').sort()[0];
  await run('pg_ctlcluster', ['--skip-systemctl-redirect', version, postgresCluster(), 'restart', '-m', 'fast'], { timeout: SERVER_COMMAND_TIMEOUT_MS });
}

/** A Markdown table, columns padded to their widest cell. */
export function markdownTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => (cell ?? '').padEnd(widths[i])).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(Math.max(3, w)))), ...rows.map(line)].join('\n');
}
