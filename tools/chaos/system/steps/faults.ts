import { log, restartPostgres, restartRabbitMq, sleep } from '../../common/infra';
import { state } from '../cleanup';
import { startClusterFault } from './cluster-faults';
import { API_RATE, FaultKind, FAULTS, FaultSpec, INGEST_RATE, KILL_RESTART_DELAY_MS, PAUSE_MS, PRESTOP_MS, RECOVERY_TIMEOUT_MS } from '../options';
import { Ingest } from './ingest';
import { Recovery } from './recovery';
import { Slot, Stack } from './stack';

const CLUSTER_KINDS = new Set<FaultKind>(['node-stop', 'node-kill', 'partition', 'replica']);

export interface FaultResult {
  spec: FaultSpec;
  start: number;
  actionAt: number;
  end: number;
  recoveredMs: number | null;
  notes: string[];
}

/** A gateway leaves the rotation (preStop), gets SIGTERM, and its ready replacement joins. */
async function rollGateway(stack: Stack, slot: Slot, result: FaultResult): Promise<void> {
  const old = slot.child!;
  slot.held = true;
  slot.inRotation = false;
  await sleep(PRESTOP_MS);
  result.actionAt = Date.now();
  await stack.terminate(slot, old, result.notes);
  if (await stack.replace(slot, result.notes)) slot.inRotation = true;
  slot.held = false;
}

/** Any other app: its replacement is ready before the old process gets SIGTERM. */
async function rollApp(stack: Stack, slot: Slot, result: FaultResult): Promise<void> {
  const old = slot.child!;
  const next = await stack.launchReady(slot);
  if (!next) {
    result.notes.push('the replacement did not become ready: the old process was left running');
  } else {
    slot.child = next.child;
    slot.port = next.port;
    result.actionAt = Date.now();
    await stack.terminate(slot, old, result.notes);
  }
}

/** SIGKILL, and a replacement a moment later, as a Deployment would start one. */
async function kill(stack: Stack, slot: Slot, result: FaultResult): Promise<void> {
  const old = slot.child!;
  stack.intended.add(old);
  if (slot.app === 'gateway') slot.held = true; // the balancer finds out by itself
  result.actionAt = Date.now();
  old.kill('SIGKILL');
  await sleep(KILL_RESTART_DELAY_MS);
  if ((await stack.replace(slot, result.notes)) && slot.app === 'gateway') slot.inRotation = true;
  slot.held = false;
}

async function restartServer(name: string, restart: () => Promise<void>, result: FaultResult): Promise<void> {
  result.actionAt = Date.now();
  await restart();
  result.notes.push(`${name} back after ${((Date.now() - result.actionAt) / 1000).toFixed(1)} s`);
}

/**
 * A cluster fault: the node (or the replica) goes away for at least its hold time; the recovery is
 * timed from the fault while the node is still away (the system runs on two nodes), then the node
 * comes back and the window ends once the system has recovered from that too. The replica: nothing
 * reads elsewhere, so its recovery is timed from its restart.
 */
async function clusterFault(recovery: Recovery, spec: FaultSpec, result: FaultResult): Promise<number | null> {
  result.actionAt = Date.now();
  const fault = await startClusterFault(spec, state.vhost, result.notes);
  const recovered = fault.recoversBeforeUndo ? recovery.waitRecovered(result.actionAt) : Promise.resolve(null);
  const [, awayAt] = await Promise.all([sleep(Math.max(0, result.actionAt + fault.holdMs - Date.now())), recovered]);
  if (fault.recoversBeforeUndo) result.notes.push(awayAt === null ? 'NOT recovered while the node was away' : `recovered with the node away in ${((awayAt - result.actionAt) / 1000).toFixed(1)} s`);
  const undoAt = Date.now();
  await fault.undo();
  const backAt = await recovery.waitRecovered(undoAt);
  if (!fault.recoversBeforeUndo) return backAt === null ? null : backAt - undoAt;
  if (backAt === null) result.notes.push('NOT recovered after the node came back');
  return awayAt === null || backAt === null ? null : awayAt - result.actionAt;
}

/** One fault, then the wait for the recovery. */
async function runFault(stack: Stack, recovery: Recovery, ingest: Ingest, spec: FaultSpec): Promise<FaultResult> {
  const result: FaultResult = { spec, start: Date.now(), actionAt: 0, end: 0, recoveredMs: null, notes: [] };
  const slot = spec.slot ? stack.slotOf(spec.slot) : null;
  log(`fault: ${spec.title}`);
  if (CLUSTER_KINDS.has(spec.kind)) {
    try {
      result.recoveredMs = await clusterFault(recovery, spec, result);
    } catch (error) {
      result.notes.push(`the fault step failed: ${String(error)}`);
    }
    result.end = Date.now();
    log(`  ${result.recoveredMs === null ? 'NOT recovered' : `recovered in ${(result.recoveredMs / 1000).toFixed(1)} s`} (${result.notes.join('; ')})`);
    return result;
  }
  try {
    if (spec.kind === 'term' && slot && slot.app === 'gateway') await rollGateway(stack, slot, result);
    else if (spec.kind === 'term' && slot) await rollApp(stack, slot, result);
    else if (spec.kind === 'kill' && slot) await kill(stack, slot, result);
    else if (spec.kind === 'rabbitmq') await restartServer('RabbitMQ', restartRabbitMq, result);
    else if (spec.kind === 'postgres') await restartServer('PostgreSQL', restartPostgres, result);
  } catch (error) {
    result.notes.push(`the fault step failed: ${String(error)}`);
  }
  result.actionAt ||= Date.now();
  const at = await recovery.waitRecovered(result.actionAt);
  if (ingest.stream.exhausted) result.notes.push('--max-auctions reached: recovery without the webhook probe');
  result.end = at ?? Date.now();
  result.recoveredMs = at === null ? null : at - result.actionAt;
  log(`  ${at === null ? `NOT recovered within ${RECOVERY_TIMEOUT_MS / 1000} s` : `recovered in ${((at - result.actionAt) / 1000).toFixed(1)} s`}`);
  return result;
}

/** Warm-up until the system is healthy under load, then the faults one after the other, a pause after each. */
export async function runFaults(stack: Stack, recovery: Recovery, ingest: Ingest, logDir: string): Promise<FaultResult[]> {
  log(`load: ${API_RATE} API requests/s over the rotation, ${INGEST_RATE} observations/s`);
  await sleep(Math.max(PAUSE_MS, 8000));
  const preflight = await recovery.waitRecovered(Date.now());
  if (preflight === null) throw new Error(`the system never became healthy before the first fault (logs: ${logDir})`);
  const results: FaultResult[] = [];
  for (const spec of FAULTS) {
    results.push(await runFault(stack, recovery, ingest, spec));
    await sleep(PAUSE_MS);
  }
  return results;
}
