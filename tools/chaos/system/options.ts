import { parseArgs } from 'node:util';

/** The drill's command line (see main.ts), its fixed timings, and the faults it runs. */

const { values: flags } = parseArgs({
  strict: true,
  options: {
    rate: { type: 'string', default: '50' },
    'ingest-rate': { type: 'string', default: '100' },
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

export type FaultKind = 'term' | 'kill' | 'rabbitmq' | 'postgres';
export interface FaultSpec {
  id: string;
  kind: FaultKind;
  slot?: SlotLabel;
  title: string;
}

const ALL_FAULTS: FaultSpec[] = [
  ...SLOT_LABELS.map((slot) => ({ id: `term:${slot}`, kind: 'term' as const, slot, title: `SIGTERM roll ${slot}` })),
  ...SLOT_LABELS.map((slot) => ({ id: `kill:${slot}`, kind: 'kill' as const, slot, title: `SIGKILL ${slot}` })),
  { id: 'rabbitmq', kind: 'rabbitmq', title: 'RabbitMQ restart (stop_app/start_app)' },
  { id: 'postgres', kind: 'postgres', title: 'PostgreSQL restart (pg_ctlcluster -m fast)' },
];

function selectFaults(): FaultSpec[] {
  const tokens = flags.faults.split(',').map((t) => t.trim()).filter(Boolean);
  const matches = (id: string, token: string) => token === 'all' || id === token || id.startsWith(`${token}:`) || id.startsWith(`${token}#`);
  for (const token of tokens) {
    if (!ALL_FAULTS.some((f) => matches(f.id, token))) {
      console.error(`chaos:system: unknown fault "${token}" (faults: ${ALL_FAULTS.map((f) => f.id).join(', ')})`);
      process.exit(2);
    }
  }
  const selected = ALL_FAULTS.filter((f) => tokens.some((t) => matches(f.id, t)));
  return flags['skip-restarts'] ? selected.filter((f) => f.kind !== 'rabbitmq' && f.kind !== 'postgres') : selected;
}
export const FAULTS = selectFaults();
