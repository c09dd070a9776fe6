/**
 * A three-node RabbitMQ cluster and a PostgreSQL primary with a streaming replica on this machine,
 * on ports and in a data directory of their own (`npm run cluster:up` / `cluster:down`, and the
 * cluster drill). The machine's own RabbitMQ node (5672) and PostgreSQL server (5432) are never
 * touched. RabbitMQ nodes run as user rabbitmq (the machine's Erlang cookie, their own node names
 * rmq1..3@localhost), PostgreSQL as user postgres (initdb, pg_basebackup, pg_ctl of version 15).
 * Settings: CARS_CLUSTER_DIR (default /tmp/cars-cluster).
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { log, sleep } from './infra';

const run = promisify(execFile);

export const CLUSTER_DIR = process.env.CARS_CLUSTER_DIR ?? '/tmp/cars-cluster';
const PG_BIN = '/usr/lib/postgresql/15/bin';
const COMMAND_TIMEOUT_MS = 120_000;

export interface RabbitNode {
  /** rmq1@localhost … */
  name: string;
  amqpPort: number;
  distPort: number;
  dir: string;
}

export const RABBIT_NODES: RabbitNode[] = [1, 2, 3].map((n) => ({
  name: `rmq${n}@localhost`,
  amqpPort: 5680 + n,
  distPort: 25680 + n,
  dir: join(CLUSTER_DIR, `rmq${n}`),
}));

export interface PostgresServer {
  role: 'primary' | 'replica';
  port: number;
  dir: string;
}

export const PRIMARY: PostgresServer = { role: 'primary', port: 5441, dir: join(CLUSTER_DIR, 'pg-primary') };
export const REPLICA: PostgresServer = { role: 'replica', port: 5442, dir: join(CLUSTER_DIR, 'pg-replica') };
const SOCKET_DIR = join(CLUSTER_DIR, 'pg-sockets');
/** The physical replication slot that keeps the primary's WAL while the replica is down. */
const REPLICATION_SLOT = 'cars_replica';

/** The cluster's URLs: every node for RABBITMQ_URL (with a vhost), the primary and the replica for a database. */
export function clusterUrls(vhost?: string, database = 'postgres'): { rabbitmq: string; database: string; readDatabase: string; admin: string } {
  const suffix = vhost ? `/${encodeURIComponent(vhost)}` : '';
  return {
    rabbitmq: RABBIT_NODES.map((node) => `amqp://guest:guest@127.0.0.1:${node.amqpPort}${suffix}`).join(','),
    database: `postgres://postgres@127.0.0.1:${PRIMARY.port}/${database}`,
    readDatabase: `postgres://postgres@127.0.0.1:${REPLICA.port}/${database}`,
    admin: `postgres://postgres@127.0.0.1:${PRIMARY.port}/postgres`,
  };
}

// ---------------------------------------------------------------------------------------------
// RabbitMQ

function asUser(user: string, command: string, timeout = COMMAND_TIMEOUT_MS): Promise<{ stdout: string; stderr: string }> {
  return run('su', [user, '-s', '/bin/bash', '-c', command], { timeout });
}

const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

/** `rabbitmqctl -n <node> …` (the machine's cookie; the node names keep it apart from the machine's own node). */
export async function rabbitmqctl(node: RabbitNode, ...args: string[]): Promise<string> {
  const { stdout } = await run('rabbitmqctl', ['-n', node.name, '-q', ...args], { timeout: COMMAND_TIMEOUT_MS });
  return stdout;
}

function writeNodeFiles(node: RabbitNode): void {
  mkdirSync(node.dir, { recursive: true });
  // pause_minority: a node cut off from the others stops serving rather than diverging.
  writeFileSync(
    join(node.dir, 'rabbitmq.conf'),
    [`listeners.tcp.local = 127.0.0.1:${node.amqpPort}`, 'cluster_partition_handling = pause_minority', 'loopback_users = none', ''].join('\n'),
  );
  writeFileSync(join(node.dir, 'enabled_plugins'), '[].\n');
  writeFileSync(join(node.dir, 'env.conf'), `NODENAME=${node.name}\n`);
  const { uid, gid } = statSync('/var/lib/rabbitmq');
  for (const path of [node.dir, join(node.dir, 'rabbitmq.conf'), join(node.dir, 'enabled_plugins'), join(node.dir, 'env.conf')]) chownSync(path, uid, gid);
}

/** Starts a node's Erlang VM detached and waits until RabbitMQ runs on it. */
export async function startNode(node: RabbitNode): Promise<void> {
  const env = [
    'HOME=/var/lib/rabbitmq',
    `RABBITMQ_CONF_ENV_FILE=${node.dir}/env.conf`,
    `RABBITMQ_CONFIG_FILE=${node.dir}/rabbitmq.conf`,
    `RABBITMQ_NODENAME=${node.name}`,
    `RABBITMQ_NODE_PORT=${node.amqpPort}`,
    `RABBITMQ_DIST_PORT=${node.distPort}`,
    `RABBITMQ_MNESIA_BASE=${node.dir}/mnesia`,
    `RABBITMQ_LOG_BASE=${node.dir}/log`,
    `RABBITMQ_ENABLED_PLUGINS_FILE=${node.dir}/enabled_plugins`,
  ];
  await asUser('rabbitmq', `env ${env.map(quote).join(' ')} rabbitmq-server -detached`);
  // -detached returns before the VM registers with epmd: wait for it, then for RabbitMQ on it.
  const deadline = Date.now() + 60_000;
  while ((await nodePid(node)) === null) {
    if (Date.now() > deadline) throw new Error(`${node.name} did not start (log: ${node.dir}/log)`);
    await sleep(500);
  }
  await rabbitmqctl(node, 'await_startup', '--timeout', '90');
}

/** Stops a node's VM cleanly (`rabbitmqctl stop`). */
export async function stopNode(node: RabbitNode): Promise<void> {
  await rabbitmqctl(node, 'stop').catch(() => undefined);
}

/** The OS pid of a node's VM (to SIGKILL it), or null when it is not running. */
export async function nodePid(node: RabbitNode): Promise<number | null> {
  const pid = await rabbitmqctl(node, 'eval', 'list_to_integer(os:getpid()).').catch(() => '');
  const n = Number(pid.trim());
  return Number.isInteger(n) && n > 0 ? n : null;
}

export async function killNode(node: RabbitNode): Promise<void> {
  const pid = await nodePid(node);
  if (pid === null) throw new Error(`${node.name} is not running`);
  process.kill(pid, 'SIGKILL');
}

/**
 * Cuts one node off from the others at the Erlang distribution: on that node the cookie for each
 * peer is set to a wrong one and the links are dropped, so neither side can reconnect (a network
 * partition as the cluster sees it; clients keep their TCP connections to the node, which
 * pause_minority then stops serving). `healPartition` puts the right cookie back.
 */
export async function partitionNode(node: RabbitNode): Promise<void> {
  const peers = RABBIT_NODES.filter((n) => n !== node).map((n) => `'${n.name}'`);
  await rabbitmqctl(node, 'eval', `[begin erlang:set_cookie(N, cars_partitioned), erlang:disconnect_node(N) end || N <- [${peers.join(',')}]], ok.`);
}

export async function healPartition(node: RabbitNode): Promise<void> {
  const peers = RABBIT_NODES.filter((n) => n !== node).map((n) => `'${n.name}'`);
  await rabbitmqctl(node, 'eval', `[erlang:set_cookie(N, erlang:get_cookie()) || N <- [${peers.join(',')}]], [net_adm:ping(N) || N <- [${peers.join(',')}]].`);
}

/** The nodes the cluster sees running, by one node's account. */
export async function runningNodes(via: RabbitNode): Promise<string[]> {
  const out = await rabbitmqctl(via, 'eval', 'rabbit_nodes:all_running().').catch(() => '');
  return [...out.matchAll(/'?(rmq\d@localhost)'?/g)].map((m) => m[1]);
}

/** The node that leads a quorum queue, or null. */
export async function queueLeader(via: RabbitNode, vhost: string, queue: string): Promise<string | null> {
  const out = await rabbitmqctl(via, 'list_queues', '-p', vhost, 'name', 'leader', '--no-table-headers').catch(() => '');
  for (const line of out.split('\n')) {
    const [name, leader] = line.trim().split(/\s+/);
    if (name === queue && leader) return leader;
  }
  return null;
}

export function nodeByName(name: string): RabbitNode {
  const node = RABBIT_NODES.find((n) => n.name === name);
  if (!node) throw new Error(`no cluster node ${name}`);
  return node;
}

async function rabbitUp(): Promise<void> {
  const [first, ...others] = RABBIT_NODES;
  for (const node of RABBIT_NODES) writeNodeFiles(node);
  log(`RabbitMQ: starting ${first.name} (AMQP ${first.amqpPort})`);
  await startNode(first);
  for (const node of others) {
    log(`RabbitMQ: starting ${node.name} (AMQP ${node.amqpPort}) and joining it to ${first.name}`);
    await startNode(node);
    await rabbitmqctl(node, 'stop_app');
    await rabbitmqctl(node, 'reset');
    await rabbitmqctl(node, 'join_cluster', first.name);
    await rabbitmqctl(node, 'start_app');
  }
  const running = await runningNodes(first);
  if (running.length !== RABBIT_NODES.length) throw new Error(`the cluster runs ${running.join(', ') || 'no node'}; expected three`);
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

const pgCommand = (tool: string, args: string[]) => `${PG_BIN}/${tool} ${args.map(quote).join(' ')}`;

export async function pgStart(server: PostgresServer): Promise<void> {
  await asUser('postgres', pgCommand('pg_ctl', ['-D', server.dir, '-l', join(CLUSTER_DIR, `${server.role}.log`), '-w', '-t', '60', 'start']));
}

export async function pgStop(server: PostgresServer): Promise<void> {
  if (!existsSync(join(server.dir, 'postmaster.pid'))) return;
  await asUser('postgres', pgCommand('pg_ctl', ['-D', server.dir, '-m', 'fast', '-w', '-t', '60', 'stop'])).catch(() => undefined);
}

async function postgresUp(): Promise<void> {
  const { uid, gid } = statSync('/var/lib/postgresql');
  mkdirSync(CLUSTER_DIR, { recursive: true });
  for (const path of [PRIMARY.dir, REPLICA.dir, SOCKET_DIR]) {
    mkdirSync(path, { recursive: true, mode: 0o700 });
    chownSync(path, uid, gid);
  }
  const logs = [join(CLUSTER_DIR, 'primary.log'), join(CLUSTER_DIR, 'replica.log')];
  for (const path of logs) {
    writeFileSync(path, '');
    chownSync(path, uid, gid);
  }
  log(`PostgreSQL: primary on ${PRIMARY.port}`);
  await asUser('postgres', pgCommand('initdb', ['-D', PRIMARY.dir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8']));
  const settings = [
    `port = ${PRIMARY.port}`,
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${SOCKET_DIR}'`,
    'wal_level = replica',
    'max_wal_senders = 5',
    'max_replication_slots = 5',
    'hot_standby = on',
    // A query on the replica is not cancelled by the replay of a vacuum it still needs.
    'hot_standby_feedback = on',
    'max_connections = 200',
    'shared_buffers = 128MB',
    'fsync = on',
    '',
  ];
  writeFileSync(join(PRIMARY.dir, 'postgresql.conf'), `${readFileSync(join(PRIMARY.dir, 'postgresql.conf'), 'utf8')}\n# cars cluster\n${settings.join('\n')}`);
  await pgStart(PRIMARY);
  log(`PostgreSQL: streaming replica on ${REPLICA.port} (pg_basebackup, slot ${REPLICATION_SLOT})`);
  await asUser('postgres', pgCommand('pg_basebackup', ['-h', '127.0.0.1', '-p', String(PRIMARY.port), '-U', 'postgres', '-D', REPLICA.dir, '-R', '-X', 'stream', '-C', '-S', REPLICATION_SLOT]));
  await asUser('postgres', `echo ${quote(`port = ${REPLICA.port}`)} >> ${quote(join(REPLICA.dir, 'postgresql.auto.conf'))}`);
  await pgStart(REPLICA);
  const replica = new Client({ connectionString: clusterUrls().readDatabase });
  await replica.connect();
  try {
    const { rows } = await replica.query<{ recovery: boolean }>('SELECT pg_is_in_recovery() AS recovery');
    if (!rows[0].recovery) throw new Error('the replica is not in recovery');
  } finally {
    await replica.end();
  }
}

/** How far the replica is behind the primary, in bytes of WAL not yet replayed (null when it cannot be told). */
export async function replicaLagBytes(): Promise<number | null> {
  const primary = new Client({ connectionString: clusterUrls().admin });
  primary.on('error', () => undefined);
  try {
    await primary.connect();
    const { rows } = await primary.query<{ lag: string | null }>(
      `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::text AS lag FROM pg_stat_replication WHERE application_name <> '' LIMIT 1`,
    );
    return rows[0]?.lag === null || rows[0] === undefined ? null : Number(rows[0].lag);
  } catch {
    return null;
  } finally {
    await primary.end().catch(() => undefined);
  }
}

/** Waits until the replica has replayed everything the primary had written when called (false after `timeoutMs`). */
export async function waitReplicaCaughtUp(timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await replicaLagBytes()) === 0) return true;
    await sleep(250);
  }
  return false;
}

// ---------------------------------------------------------------------------------------------

/** Whether a cluster of ours is set up here (its directory exists). */
export function clusterExists(): boolean {
  return existsSync(CLUSTER_DIR);
}

/** Starts the whole cluster from nothing (any earlier one is removed first). */
export async function clusterUp(): Promise<void> {
  await clusterDown();
  mkdirSync(CLUSTER_DIR, { recursive: true });
  try {
    await rabbitUp();
    await postgresUp();
  } catch (error) {
    await clusterDown();
    throw error;
  }
}

/** Stops every server of the cluster and removes its directory. */
export async function clusterDown(): Promise<void> {
  for (const node of [...RABBIT_NODES].reverse()) await stopNode(node);
  // A node cut off or killed may have left its VM or epmd registration: stop by pid when one answers.
  for (const node of RABBIT_NODES) {
    const pid = await nodePid(node);
    if (pid !== null) process.kill(pid, 'SIGKILL');
  }
  await pgStop(REPLICA);
  await pgStop(PRIMARY);
  rmSync(CLUSTER_DIR, { recursive: true, force: true });
}
