import { CLUSTER } from './options';
import { ApiLoad } from './steps/api-load';
import { Check, checkEndState } from './steps/end-state';
import { faultTable, FaultTable } from './steps/fault-table';
import { runFaults } from './steps/faults';
import { Ingest } from './steps/ingest';
import { prepareDrill } from './steps/prepare';
import { Recovery } from './steps/recovery';
import { checkReplica } from './steps/replica-check';
import { printReport } from './steps/report';
import { waitForSettled } from './steps/settle';
import { Stack } from './steps/stack';
import { createWebhookEndpoints } from './steps/webhooks';

/** The drill (see main.ts; the cluster profile: tools/chaos/cluster/main.ts): its exit code. Clean-up is the caller's. */
export async function runDrill(): Promise<number> {
  const drill = await prepareDrill();
  const stack = new Stack(drill);
  await stack.start();
  await createWebhookEndpoints(drill, stack);
  const load = new ApiLoad(stack, drill.loadKey);
  load.start();
  const ingest = new Ingest(drill);
  ingest.start();

  const results = await runFaults(stack, new Recovery(drill, stack, load, ingest), ingest, drill.logDir);

  // The end: no new auctions; the API load stops; the pending updates and ends go out.
  ingest.stopCreating();
  const loadEnd = Date.now();
  await load.stop();
  const auctions = await ingest.finish();
  await waitForSettled(drill, auctions);
  const replicaChecks = CLUSTER ? await checkReplica(drill, stack, load) : [];
  await stack.stop();
  const elapsed = (Date.now() - drill.started) / 1000;

  const table = faultTable(load.records, results, loadEnd, drill.logDir);
  const checks = await checkEndState(drill, stack, load, results, table, { auctions, loadEnd, published: ingest.stream.published, elapsed });
  if (CLUSTER) checks.push(...replicaChecks, ...clusterApiChecks(table));
  printReport(drill, table, checks);
  return checks.every(([, , ok]) => ok) ? 0 : 1;
}

/** The cluster profile: API requests fail only inside a fault's window, and never by hanging. */
function clusterApiChecks(table: FaultTable): Check[] {
  const outside = (table.byWindow.get(null) ?? []).filter((r) => !r.ok).length;
  const hung = [...table.byWindow.values()].flat().filter((r) => r.outcome === 'timeout').length;
  return [
    ['failed API requests outside the fault windows', String(outside), outside === 0],
    ['API requests that timed out (hung) instead of a fast answer', String(hung), hung === 0],
  ];
}
