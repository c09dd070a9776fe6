/**
 * Delivery under faults (`npm run chaos:delivery`): N events (default 10,000) to three loopback
 * receivers — one healthy, one failing 20 % of requests with 500, one answering slowly — while the
 * delivery worker is killed with SIGKILL three times, RabbitMQ is restarted once and PostgreSQL
 * is restarted once. Then every (event, subscription) pair must have been received at least once,
 * every request must verify with its endpoint's secret and carry its event id as `webhook-id`
 * (duplicates are the same event), and the ledger must have charged exactly one unit per
 * successfully delivered pair. The retry schedule is scaled down so the run ends in minutes.
 *
 * It restarts this machine's PostgreSQL and RabbitMQ: run it on its own, never beside `npm test`.
 * Flags: --events N  --workers N (replicas, default 2)  --skip-restarts (kills only).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'pg';
import { deleteVhost, dropDatabase, log, markdownTable } from '../common/infra';
import { checkEndState, Drill, prepareDrill, produce, runFaults, waitForDeliveries, Workers } from './steps';

const { values: flags } = parseArgs({
  strict: true,
  options: {
    events: { type: 'string', default: '10000' },
    workers: { type: 'string', default: '2' },
    'skip-restarts': { type: 'boolean', default: false },
  },
});
const EVENTS = Number(flags.events);
const WORKERS = Number(flags.workers);

/** The faults, the end-state table, and the last attempt of the deliveries that failed. */
async function report(pool: Pool, drill: Drill, faults: string[], rows: [string, string, boolean][], logDir: string): Promise<void> {
  process.stdout.write(`\nfaults: ${faults.join('; ')}\n\n`);
  process.stdout.write(`${markdownTable(['check', 'value', 'ok'], rows.map(([k, v, ok]) => [k, v, ok ? 'yes' : 'NO']))}\n`);
  for (const problem of drill.problems.slice(0, 5)) process.stdout.write(`  problem: ${problem}\n`);
  process.stdout.write(`worker logs: ${logDir}\n`);
  // Failed deliveries used their six attempts (the flaky receiver fails 20 % of requests; a kill
  // interrupts the attempts its worker held): what their last attempt was.
  const { rows: failed } = await pool.query<{ url: string; attempts: number; last_error: string | null; last_response_status: number | null }>(
    `SELECT s.url, d.attempts, d.last_error, d.last_response_status
       FROM webhook_deliveries d JOIN webhook_subscriptions s ON s.id = d.subscription_id
      WHERE d.status = 'failed' LIMIT 10`,
  );
  for (const f of failed) {
    process.stdout.write(`  failed: ${new URL(f.url).pathname} after ${f.attempts} attempts, last ${f.last_response_status ?? f.last_error ?? '?'}\n`);
  }
}

async function main(): Promise<void> {
  const drill = await prepareDrill();
  const logDir = mkdtempSync(join(tmpdir(), 'cars-chaos-delivery-'));
  const workers = new Workers(drill, logDir, WORKERS);
  workers.startAll();

  const pool = new Pool({ connectionString: drill.databaseUrl, max: 2 });
  pool.on('error', () => undefined);
  const produced: string[] = [];
  const faults: string[] = [];
  const started = Date.now();
  await Promise.all([produce(pool, drill.rabbitUrl, EVENTS, produced), runFaults(workers, flags['skip-restarts'] === true, faults)]);
  log(`${produced.length} events produced; waiting for every delivery to finish`);

  const summary = await waitForDeliveries(pool, drill.arrivals, produced.length * drill.subscriptions.length);
  const elapsed = (Date.now() - started) / 1000;
  workers.stopAll();

  const rows = await checkEndState(pool, drill, { events: EVENTS, produced, summary, crashes: workers.crashes, elapsed });
  await report(pool, drill, faults, rows, logDir);

  await pool.end();
  await drill.closeReceivers();
  await dropDatabase(drill.name);
  deleteVhost(drill.name);
  process.exit(rows.every(([, , ok]) => ok) ? 0 : 1);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
