import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { markdownTable } from '../../common/infra';
import { API_RATE, CLUSTER, INGEST_RATE } from '../options';
import { Check } from './end-state';
import { FaultTable } from './fault-table';
import { Drill } from './prepare';

/** The fault table, the end-state table, what went wrong outside the faults, and how to read them. */
export function printReport(drill: Drill, table: FaultTable, checks: Check[]): void {
  process.stdout.write(`\n## Faults (${API_RATE} API requests/s, ${INGEST_RATE} observations/s)\n\n`);
  process.stdout.write(`${markdownTable(['fault', 'window s', 'requests', 'failed', 'failures by kind', 'recovery s', 'notes'], table.faultRows)}\n`);
  process.stdout.write(`\n## End state\n\n${markdownTable(['check', 'value', 'ok'], checks.map(([k, v, ok]) => [k, v, ok ? 'yes' : 'NO']))}\n`);
  for (const problem of drill.problems.slice(0, 5)) process.stdout.write(`  problem: ${problem}\n`);
  for (const line of table.failedLines.filter((l) => l.includes(' outside ')).slice(0, 10)) process.stdout.write(`  failed outside a fault window: ${line}\n`);
  const errorLines = readdirSync(drill.logDir)
    .filter((file) => file !== 'failed-requests.log')
    .flatMap((file) => readFileSync(join(drill.logDir, file), 'utf8').split('\n').filter((l) => l.includes('"level":"error"')).map((l) => `${file}: ${l.slice(0, 300)}`));
  process.stdout.write(`\napp log lines at level error: ${errorLines.length}\n`);
  for (const line of errorLines.slice(0, 10)) process.stdout.write(`  ${line}\n`);
  if (CLUSTER) {
    process.stdout.write(
      `\nCluster faults: "recovery s" is from the fault until recovered with the node still away (for the replica: from its\n` +
        `restart); the window ends once recovered again after the node (or the replica) came back.\n`,
    );
  }
  process.stdout.write(
    `\nRecovery: from the fault (SIGTERM, SIGKILL or server restart) until every app answers /health/ready, every gateway answers\n` +
      `/auctions, /stats and /webhooks, and the first auction published after the fault arrived as auction.created at a receiver.\n` +
      `A request belongs to the window (the fault's first step to its recovery) in which its answer or error came, else to the one\n` +
      `it was in flight during. App logs: ${drill.logDir}\n` +
      `Ledgers: the webhooks belong to an account that makes no counted API request, so its units used must equal its succeeded\n` +
      `deliveries exactly; the API load uses a second account, compared with the metered responses (2xx, 404) the client received.\n` +
      `A gateway killed with SIGKILL, or a ledger statement cut off by a PostgreSQL restart, leaves that unit reserved (by design:\n` +
      `the customer never gains units), so after those faults only used ≤ counted ≤ used + reserved is exact for the API account.\n`,
  );
}
