import { Client } from 'pg';
import { waitReplicaCaughtUp } from '../../common/cluster';
import { log } from '../../common/infra';
import { ApiLoad } from './api-load';
import { Check } from './end-state';
import { Drill } from './prepare';
import { Stack } from './stack';

/** Answers compared between the replica and the primary: the query and stats routes of the load, with totals. */
const PROBES = [
  { route: '/auctions', path: '/auctions?limit=50' },
  { route: '/auctions', path: '/auctions?make=Porsche&limit=20' },
  { route: '/auctions/live', path: '/auctions/live?limit=20' },
  { route: '/stats', path: '/stats?make=Porsche' },
  { route: '/stats', path: '/stats?make=Jaguar' },
] as const;

/** Fields of an answer that differ between two identical reads (when it was answered), left out of the comparison. */
const VOLATILE = new Set(['request_id', 'generated_at', 'took_ms', 'as_of']);

function stable(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), (key, value: unknown) => (VOLATILE.has(key) ? undefined : value));
  } catch {
    return body;
  }
}

async function answers(stack: Stack, drill: Drill, load: ApiLoad): Promise<string[]> {
  const out: string[] = [];
  for (const probe of PROBES) {
    const answer = await stack.send(probe.path, drill.loadKey);
    load.countIfMetered(probe.route, answer.status);
    out.push(`${answer.status} ${stable(answer.body)}`);
  }
  return out;
}

/** Connections of the query and stats services to the drill's database on the replica, by application name. */
async function replicaReaders(drill: Drill): Promise<Record<string, number>> {
  const client = new Client({ connectionString: drill.readDatabaseUrl });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ application_name: string; n: number }>(
      `SELECT application_name, count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name IN ('query', 'stats') GROUP BY 1`,
    );
    return Object.fromEntries(rows.map((r) => [r.application_name, r.n]));
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The cluster profile, once everything has settled (no writes any more): the replica has caught up;
 * query and stats read from it (their connections are there); and their answers equal those of the
 * same services reading from the primary — the query and stats processes are replaced by ones
 * without the replica (READ_DATABASE_URL = DATABASE_URL) and asked again.
 */
export async function checkReplica(drill: Drill, stack: Stack, load: ApiLoad): Promise<Check[]> {
  const checks: Check[] = [];
  const caughtUp = await waitReplicaCaughtUp(60_000);
  checks.push(['replica caught up with the primary (0 bytes of WAL behind)', caughtUp ? 'yes' : 'no', caughtUp]);
  const fromReplica = await answers(stack, drill, load);
  const readers = await replicaReaders(drill);
  checks.push([
    'query / stats connections on the replica',
    `${readers.query ?? 0} / ${readers.stats ?? 0}`,
    (readers.query ?? 0) > 0 && (readers.stats ?? 0) > 0,
  ]);
  log('replacing query and stats with processes reading from the primary, to compare their answers');
  const notes: string[] = [];
  for (const label of ['query', 'stats'] as const) {
    const slot = stack.slotOf(label);
    const old = slot.child!;
    const next = await stack.launchReady(slot, { READ_DATABASE_URL: drill.databaseUrl });
    if (!next) throw new Error(`${label} reading from the primary did not become ready`);
    slot.child = next.child;
    slot.port = next.port;
    await stack.terminate(slot, old, notes);
  }
  const fromPrimary = await answers(stack, drill, load);
  const differing = PROBES.filter((_, i) => fromReplica[i] !== fromPrimary[i]).map((p) => p.path);
  const ok200 = fromReplica.every((a) => a.startsWith('200 '));
  checks.push([
    'answers from the replica equal the primary\'s (after catch-up)',
    differing.length === 0 ? `${PROBES.length} of ${PROBES.length}${ok200 ? '' : ' (not all 200)'}` : `differ: ${differing.join(', ')}`,
    differing.length === 0 && ok200,
  ]);
  return checks;
}
