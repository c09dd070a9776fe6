import { parseArgs } from 'node:util';

/** The drill's command line (see main.ts), its fixed timings, and the faults it runs. */

/**
 * The cluster profile (`npm run chaos:cluster`, tools/chaos/cluster/main.ts): the same drill on the
 * three-node RabbitMQ cluster and the PostgreSQL primary + replica of `cluster:up`, with the
 * cluster's faults instead of the app and server restarts. Set by that entry point before it loads
 * the drill.
 */
export const CLUSTER = process.env.CHAOS_CLUSTER === '1';

const { values: flags } = parseArgs({
  strict: true,
  options: {
    // Lower on the cluster: three RabbitMQ nodes and two PostgreSQL servers share the machine with the apps.
    rate: { type: 'string', default: CLUSTER ? '30' : '50' },
    'ingest-rate': { type: 'string', default: CLUSTER ? '60' : '100' },
    faults: { type: 'string', default: 'all' },
    'skip-restarts': { type: 'boolean', default: false },
    pause: { type: 'string', default: '5' },
    'recovery-timeout': { type: 'string', default: '120' },
    'max-auctions': { type: 'string', default: '12000' },
  },
});

function numberFlag(name: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max) {
    console.error(`chaos:system: --${name} must be a number from ${min} to ${max}`);
    process.exit(2);
  }
  return n;
}

export const API_RATE = numberFlag('rate', flags.rate, 1, 500);
export const INGEST_RATE = numberFlag('ingest-rate', flags['ingest-rate'], 3, 1000);
export const PAUSE_MS = numberFlag('pause', flags.pause, 0, 600) * 1000;
export const RECOVERY_TIMEOUT_MS = numberFlag('recovery-timeout', flags['recovery-timeout'], 5, 1800) * 1000;
export const MAX_AUCTIONS = numberFlag('max-auctions', flags['max-auctions'], 10, 15_000);

export const REDIS_URL = process.env.CHAOS_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** How long an app may take to become ready, and to stop after SIGTERM (its deadline is 10 s). */
export const READY_TIMEOUT_MS = 60_000;
export const STOP_TIMEOUT_MS = 20_000;
/** Kubernetes' preStop: how long a gateway out of the rotation waits before its SIGTERM. */
export const PRESTOP_MS = 500;
/** How long a killed process stays down before the replacement starts (a Deployment's reaction). */
export const KILL_RESTART_DELAY_MS = 1000;
export const REQUEST_TIMEOUT_MS = 15_000;
export const MAX_IN_FLIGHT = Math.max(50, API_RATE * 10);
/** An auction's update is observed this long after its creation, and its end twice as long after. */
export const STEP_MS = 3000;
export const MAX_RUN_MS = 60 * 60_000;

/** The processes: two gateway replicas and one of each other app. */
export const SLOT_LABELS = ['gateway#1', 'gateway#2', 'query', 'stats', 'webhooks', 'change-detector', 'delivery-worker'] as const;
export type SlotLabel = (typeof SLOT_LABELS)[number];

export type FaultKind = 'term' | 'kill' | 'rabbitmq' | 'postgres' | 'node-stop' | 'node-kill' | 'partition' | 'replica';
export interface FaultSpec {
  id: string;
  kind: FaultKind;
  slot?: SlotLabel;
  /** Cluster faults: the RabbitMQ node (rmq1@localhost…), or the queue whose leader is chosen at the time of the fault. */
  node?: string;
  leaderOf?: string;
  title: string;
}

/** Cluster faults: how long a stopped, killed or cut-off node stays so (at least; longer until the system recovered without it). */
export const NODE_DOWN_MS = 10_000;
/** How long the replica stays stopped. */
export const REPLICA_DOWN_MS = 10_000;

const CLUSTER_FAULTS: FaultSpec[] = [
  ...[1, 2, 3].map((n) => ({ id: `node-stop:rmq${n}`, kind: 'node-stop' as const, node: `rmq${n}@localhost`, title: `RabbitMQ node rmq${n} stopped, started` })),
  { id: 'node-kill', kind: 'node-kill', leaderOf: 'observations', title: 'SIGKILL the RabbitMQ node leading observations, restart' },
  { id: 'partition', kind: 'partition', leaderOf: 'delivery.events', title: 'partition the node leading delivery.events, heal' },
  { id: 'replica', kind: 'replica', title: 'PostgreSQL replica stopped, started' },
];

const SYSTEM_FAULTS: FaultSpec[] = [
  ...SLOT_LABELS.map((slot) => ({ id: `term:${slot}`, kind: 'term' as const, slot, title: `SIGTERM roll ${slot}` })),
  ...SLOT_LABELS.map((slot) => ({ id: `kill:${slot}`, kind: 'kill' as const, slot, title: `SIGKILL ${slot}` })),
  { id: 'rabbitmq', kind: 'rabbitmq', title: 'RabbitMQ restart (stop_app/start_app)' },
  { id: 'postgres', kind: 'postgres', title: 'PostgreSQL restart (pg_ctlcluster -m fast)' },
];
const ALL_FAULTS = CLUSTER ? CLUSTER_FAULTS : SYSTEM_FAULTS;

function selectFaults(): FaultSpec[] {
  const tokens = flags.faults.split(',').map((t) => t.trim()).filter(Boolean);
  const matches = (id: string, token: string) => token === 'all' || id === token || id.startsWith(`${token}:`) || id.startsWith(`${token}#`);
  for (const token of tokens) {
    if (!ALL_FAULTS.some((f) => matches(f.id, token))) {
      console.error(`chaos:${CLUSTER ? 'cluster' : 'system'}: unknown fault "${token}" (faults: ${ALL_FAULTS.map((f) => f.id).join(', ')})`);
      process.exit(2);
    }
  }
  const selected = ALL_FAULTS.filter((f) => tokens.some((t) => matches(f.id, t)));
  return flags['skip-restarts'] ? selected.filter((f) => f.kind !== 'rabbitmq' && f.kind !== 'postgres') : selected;
}
export const FAULTS = selectFaults();
