import {
  healPartition,
  killNode,
  nodeByName,
  partitionNode,
  pgStart,
  pgStop,
  queueLeader,
  RABBIT_NODES,
  RabbitNode,
  rabbitmqctl,
  REPLICA,
  runningNodes,
  startNode,
  stopNode,
} from '../../common/cluster';
import { log, sleep } from '../../common/infra';
import { FaultSpec, NODE_DOWN_MS, REPLICA_DOWN_MS } from '../options';

/**
 * The cluster profile's faults (see options.ts): each acts, and returns the step that undoes it
 * (start the node again, heal the partition, start the replica), run once the system has recovered
 * without the node — or, for the replica, after REPLICA_DOWN_MS (query and stats read nowhere else).
 */
export interface ClusterFault {
  /** Undoes the fault; resolves once the node or the replica serves again. */
  undo: () => Promise<void>;
  /** The least time before `undo`. */
  holdMs: number;
  /** Whether the system is expected to recover before `undo` (a node lost: yes; the replica: no). */
  recoversBeforeUndo: boolean;
}

const someRunning = (except?: RabbitNode) => RABBIT_NODES.find((n) => n !== except)!;

/** The node a fault acts on: a named one, or the leader of a queue at this moment. */
async function target(spec: FaultSpec, vhost: string, notes: string[]): Promise<RabbitNode> {
  const leaders = await Promise.all(['observations', 'delivery.events'].map(async (queue) => `${queue}: ${(await queueLeader(someRunning(), vhost, queue)) ?? '?'}`));
  notes.push(`leaders before: ${leaders.join(', ')}`);
  if (spec.node) return nodeByName(spec.node);
  const leader = await queueLeader(someRunning(), vhost, spec.leaderOf!);
  if (!leader) throw new Error(`no leader of ${spec.leaderOf}`);
  return nodeByName(leader);
}

/** Waits until all three nodes run again, by the account of `via` (false after `timeoutMs`). */
async function waitClusterWhole(via: RabbitNode, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await runningNodes(via)).length === RABBIT_NODES.length) return true;
    await sleep(500);
  }
  return false;
}

export async function startClusterFault(spec: FaultSpec, vhost: string, notes: string[]): Promise<ClusterFault> {
  if (spec.kind === 'replica') {
    log('  stopping the replica');
    await pgStop(REPLICA);
    return {
      holdMs: REPLICA_DOWN_MS,
      recoversBeforeUndo: false,
      undo: async () => {
        await pgStart(REPLICA);
        notes.push('replica started again');
      },
    };
  }
  const node = await target(spec, vhost, notes);
  const back = async (what: string) => {
    const at = Date.now();
    const whole = await waitClusterWhole(someRunning(node), 120_000);
    notes.push(`${node.name} ${what}, ${whole ? `cluster whole after ${((Date.now() - at) / 1000).toFixed(1)} s` : 'cluster NOT whole after 120 s'}`);
  };
  if (spec.kind === 'node-stop') {
    log(`  stopping ${node.name}`);
    await stopNode(node);
    return { holdMs: NODE_DOWN_MS, recoversBeforeUndo: true, undo: () => startNode(node).then(() => back('started')) };
  }
  if (spec.kind === 'node-kill') {
    log(`  SIGKILL ${node.name}`);
    await killNode(node);
    return { holdMs: NODE_DOWN_MS, recoversBeforeUndo: true, undo: () => startNode(node).then(() => back('restarted')) };
  }
  if (spec.kind === 'partition') {
    log(`  cutting ${node.name} off from the other nodes`);
    await partitionNode(node);
    return {
      // Long enough for the cluster to notice (net tick) and pause_minority to stop the node.
      holdMs: Math.max(NODE_DOWN_MS, 20_000),
      recoversBeforeUndo: true,
      undo: async () => {
        await healPartition(node);
        // pause_minority restarts RabbitMQ on the node once it sees the majority again.
        await rabbitmqctl(node, 'await_startup', '--timeout', '120').catch(() => undefined);
        await back('healed');
      },
    };
  }
  throw new Error(`not a cluster fault: ${spec.kind}`);
}
