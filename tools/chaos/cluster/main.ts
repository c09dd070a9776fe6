/**
 * `npm run chaos:cluster`: the system drill (tools/chaos/system: mixed API load through two
 * gateways, a stream of observations, webhooks to loopback receivers, the same end-state checks) on
 * the three-node RabbitMQ cluster and PostgreSQL primary + streaming replica of `cluster:up`, with
 * the cluster's faults one at a time: each node stopped and started in turn (the queues' leaders
 * among them), the node leading `observations` SIGKILLed and restarted, the node leading
 * `delivery.events` cut off from the others (Erlang distribution) and healed, the replica stopped
 * and started. Query and stats read from the replica (READ_DATABASE_URL); at the end their answers
 * are compared with the primary's once the replica has caught up.
 *
 * Starts the cluster when none is up (and stops it at the end), else uses the running one. Flags:
 * those of chaos:system (--rate, default 30; --ingest-rate, default 60; --faults node-stop,
 * node-kill, partition, replica or ids like node-stop:rmq2; --pause; --recovery-timeout;
 * --max-auctions). Exit 0 when every check passes.
 */
import { clusterDown, clusterExists, clusterUp, clusterUrls, RABBIT_NODES, runningNodes } from '../common/cluster';
import { log } from '../common/infra';

async function ensureCluster(): Promise<boolean> {
  if (clusterExists() && (await runningNodes(RABBIT_NODES[0])).length === RABBIT_NODES.length) {
    log('using the running cluster (npm run cluster:up)');
    return false;
  }
  log('no cluster up: starting one (it is stopped at the end)');
  await clusterUp();
  return true;
}

async function main(): Promise<void> {
  const started = await ensureCluster();
  const urls = clusterUrls();
  // Read by the drill's modules when they load: the cluster profile, and where its servers are.
  process.env.CHAOS_CLUSTER = '1';
  process.env.CHAOS_ADMIN_DATABASE_URL = urls.admin;
  process.env.CHAOS_RABBITMQ_URL = urls.rabbitmq;
  process.env.CHAOS_RABBITMQ_NODE = RABBIT_NODES[0].name;
  const { cleanUp, cleanUpOnExit, state } = await import('../system/cleanup');
  const { runDrill } = await import('../system/drill');
  if (started) state.finalizers.push(clusterDown);
  cleanUpOnExit();
  const code = await runDrill().catch((error: unknown) => {
    console.error(error);
    return 1;
  });
  await cleanUp();
  process.exit(code);
}

void main().catch(async (error: unknown) => {
  console.error(error);
  process.exit(1);
});
