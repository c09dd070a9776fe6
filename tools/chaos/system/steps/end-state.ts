import { getUsage } from '@cars/accounts';
import { Pool } from 'pg';
import { ApiLoad } from './api-load';
import { FaultTable } from './fault-table';
import { FaultResult } from './faults';
import { Drill } from './prepare';
import { Stack } from './stack';

/** One line of the end-state table: what, its value, and whether it is as it must be. */
export type Check = [string, string, boolean];
type CheckFn = (what: string, value: string, ok: boolean) => void;

const firstRow = async <T>(pool: Pool, sql: string, params: unknown[] = []): Promise<T> => (await pool.query(sql, params)).rows[0] as T;

/** Every observation applied once: one row per auction, in its final state, every bid stored. */
async function checkAuctions(pool: Pool, like: string, auctions: number, check: CheckFn): Promise<void> {
  const one = <T>(sql: string, params: unknown[] = []) => firstRow<T>(pool, sql, params);
  const stored = await one<{ stored: number; final: number }>(
    `SELECT count(*)::int AS stored, count(*) FILTER (WHERE source_status = 'sold' AND bid_count = 2)::int AS final FROM auctions WHERE source_auction_id LIKE $1`,
    [like],
  );
  check('auction rows / distinct auctions published', `${stored.stored} / ${auctions}`, stored.stored === auctions);
  check('auctions in their final state (sold, 2 bids)', `${stored.final} / ${auctions}`, stored.final === auctions);
  const bids = await one<{ n: number }>(`SELECT count(*)::int AS n FROM bids b JOIN auctions a ON a.id = b.auction_id WHERE a.source_auction_id LIKE $1`, [like]);
  check('bid rows / bids published', `${bids.n} / ${auctions * 2}`, bids.n === auctions * 2);
}

/** Each auction's events what the emission rules give; every event relayed and fanned out. */
async function checkEvents(pool: Pool, like: string, check: CheckFn): Promise<void> {
  const one = <T>(sql: string, params: unknown[] = []) => firstRow<T>(pool, sql, params);
  const perAuction = (
    await pool.query<{ created: number; updated: number; ended: number; bid_events: number; created_status: string | null; created_price: string | null; price: string }>(
      `SELECT count(e.seq) FILTER (WHERE e.type = 'auction.created')::int AS created,
              count(e.seq) FILTER (WHERE e.type = 'auction.updated')::int AS updated,
              count(e.seq) FILTER (WHERE e.type = 'auction.ended')::int AS ended,
              count(e.seq) FILTER (WHERE e.type = 'bid.created')::int AS bid_events,
              max(e.payload::jsonb #>> '{data,auction,status}') FILTER (WHERE e.type = 'auction.created') AS created_status,
              max(e.payload::jsonb #>> '{data,auction,price}') FILTER (WHERE e.type = 'auction.created') AS created_price,
              a.price::text AS price
         FROM auctions a LEFT JOIN events e ON e.auction_id = a.id
        WHERE a.source_auction_id LIKE $1
        GROUP BY a.id`,
      [like],
    )
  ).rows;
  const dupCreated = perAuction.filter((a) => a.created > 1).length;
  const noCreated = perAuction.filter((a) => a.created === 0).length;
  check('auctions with a duplicate / no auction.created', `${dupCreated} / ${noCreated}`, dupCreated === 0 && noCreated === 0);
  // First seen active: exactly one auction.ended later. First seen sold (its three observations
  // applied together): created only. One auction.updated at most, none when the creation already
  // carried the updated price.
  const wrongEnded = perAuction.filter((a) => (a.created_status === 'active' ? a.ended !== 1 : a.ended !== 0)).length;
  const wrongUpdated = perAuction.filter((a) => a.updated > 1 || (a.updated === 1 && (a.created_status !== 'active' || a.created_price === a.price))).length;
  const wrongBids = perAuction.filter((a) => a.bid_events !== 2).length;
  check('auctions whose auction.ended count breaks the rules', String(wrongEnded), wrongEnded === 0);
  check('auctions whose auction.updated count breaks the rules', String(wrongUpdated), wrongUpdated === 0);
  check('auctions without exactly one bid.created per bid', String(wrongBids), wrongBids === 0);
  const eventTypes = await one<{ created: number; updated: number; ended: number; bid: number; bid_ids: number; unrelayed: number }>(
    `SELECT count(*) FILTER (WHERE type = 'auction.created')::int AS created, count(*) FILTER (WHERE type = 'auction.updated')::int AS updated,
            count(*) FILTER (WHERE type = 'auction.ended')::int AS ended, count(*) FILTER (WHERE type = 'bid.created')::int AS bid,
            count(DISTINCT payload::jsonb #>> '{data,bid,id}') FILTER (WHERE type = 'bid.created')::int AS bid_ids,
            count(*) FILTER (WHERE published_at IS NULL OR fanned_out_at IS NULL)::int AS unrelayed
       FROM events`,
  );
  check(
    'events created / updated / ended / bid.created (distinct bids)',
    `${eventTypes.created} / ${eventTypes.updated} / ${eventTypes.ended} / ${eventTypes.bid} (${eventTypes.bid_ids})`,
    eventTypes.bid === eventTypes.bid_ids,
  );
  check('events not relayed or not fanned out', String(eventTypes.unrelayed), eventTypes.unrelayed === 0);
}

/** Every (event, subscription) pair received, the deliveries done, the subscriber's ledger exact. */
async function checkDeliveries(drill: Drill, check: CheckFn): Promise<void> {
  const { pool, arrivals, problems, subscriber } = drill;
  const one = <T>(sql: string, params: unknown[] = []) => firstRow<T>(pool, sql, params);
  // Pairs: the subscriptions' rules applied to the events (both were active before the first observation).
  const expected = (
    await pool.query<{ event_id: string; subscription_id: string }>(
      `SELECT e.id AS event_id, s.id AS subscription_id FROM events e JOIN webhook_subscriptions s
          ON e.created_at >= s.active_since AND e.type = ANY (s.event_types)
         AND (s.filters ->> 'make' IS NULL OR lower(e.make) = lower(s.filters ->> 'make'))`,
    )
  ).rows;
  const pathOf = new Map(
    (await pool.query<{ id: string; url: string }>(`SELECT id, url FROM webhook_subscriptions`)).rows.map((s) => [s.id, new URL(s.url).pathname]),
  );
  const expectedKeys = new Set(expected.map((p) => `${pathOf.get(p.subscription_id)}|${p.event_id}`));
  const received = new Map<string, { all: number; ok: number }>();
  for (const a of arrivals) {
    const key = `${a.path}|${a.eventId}`;
    const entry = received.get(key) ?? { all: 0, ok: 0 };
    entry.all += 1;
    if (a.ok) entry.ok += 1;
    received.set(key, entry);
  }
  let missing = 0;
  for (const key of expectedKeys) if (!received.get(key)?.ok) missing += 1;
  let unexpected = 0;
  let duplicates = 0;
  for (const [key, entry] of received) {
    if (!expectedKeys.has(key)) unexpected += 1;
    if (entry.ok > 1) duplicates += entry.ok - 1;
  }
  const deliveries = await one<{ total: number; succeeded: number; failed: number; open: number; sending: number; canceled: number }>(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded, count(*) FILTER (WHERE status = 'failed')::int AS failed,
            count(*) FILTER (WHERE status = 'pending')::int AS open, count(*) FILTER (WHERE status = 'sending')::int AS sending,
            count(*) FILTER (WHERE status = 'canceled')::int AS canceled
       FROM webhook_deliveries`,
  );
  check('(event, subscription) pairs expected / delivery rows', `${expectedKeys.size} / ${deliveries.total}`, expectedKeys.size === deliveries.total && expectedKeys.size > 0);
  check('pairs received with a 2xx ≥ 1 time', `${expectedKeys.size - missing} / ${expectedKeys.size}`, missing === 0);
  check('receipts of no expected pair', String(unexpected), unexpected === 0);
  check('duplicate 2xx receipts (same webhook-id)', String(duplicates), true);
  check('requests failing verification or the id check', String(problems.length), problems.length === 0);
  check(
    'deliveries succeeded / failed / canceled',
    `${deliveries.succeeded} / ${deliveries.failed} / ${deliveries.canceled}`,
    deliveries.succeeded === deliveries.total && deliveries.failed === 0 && deliveries.canceled === 0,
  );
  check('deliveries left pending / sending', `${deliveries.open} / ${deliveries.sending}`, deliveries.open === 0 && deliveries.sending === 0);
  const hooksUsage = await getUsage(pool, subscriber.account.id);
  check('subscriber units used / succeeded deliveries', `${hooksUsage.used} / ${deliveries.succeeded}`, hooksUsage.used === deliveries.succeeded);
  check('subscriber units still reserved', String(hooksUsage.reserved), hooksUsage.reserved === 0);
}

async function checkApiLedger(drill: Drill, results: FaultResult[], countedByClient: number, check: CheckFn): Promise<void> {
  const { pool, loadAccount } = drill;
  // The API account: what the gateways counted against what the client saw answered. Gateways
  // settle spent units within a second and give idle leases back after 250 ms
  // (docs/adr/0007-metering-leases.md), so the ledger is read once nothing is held, or after 5 s.
  // A gateway killed with SIGKILL leaves its lease reserved until it expires, and the units it had
  // spent and not settled are then not counted; a ledger statement lost to a PostgreSQL restart
  // reads as never made (never units the customer gains): then only the bounds are exact.
  let apiUsage = await getUsage(pool, loadAccount.account.id);
  for (let waited = 0; apiUsage.reserved > 0 && waited < 5000; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    apiUsage = await getUsage(pool, loadAccount.account.id);
  }
  const lossy = results.some((f) => (f.spec.kind === 'kill' && f.spec.slot?.startsWith('gateway')) || f.spec.kind === 'postgres');
  if (lossy) {
    check('API units used ≤ counted responses seen', `${apiUsage.used} ≤ ${countedByClient}`, apiUsage.used <= countedByClient);
    check(
      'API responses seen not in used + reserved (spent by a killed gateway, its lease swept: by design)',
      String(Math.max(0, countedByClient - apiUsage.used - apiUsage.reserved)),
      true,
    );
    check('API units left reserved (killed gateway / restarted database: by design)', String(apiUsage.reserved), true);
  } else {
    check('API units used / counted responses seen', `${apiUsage.used} / ${countedByClient}`, apiUsage.used === countedByClient);
    check('API units still reserved', String(apiUsage.reserved), apiUsage.reserved === 0);
  }
}

/** The processes' exits, the SIGTERM rolls' failed requests, the recoveries, and the run's totals. */
function checkRun(
  stack: Stack,
  load: ApiLoad,
  results: FaultResult[],
  table: FaultTable,
  totals: { loadEnd: number; published: number; elapsed: number },
  check: CheckFn,
): void {
  const { crashes, sigtermExits } = stack;
  const { byWindow } = table;
  const { records } = load;
  const { loadEnd, elapsed } = totals;
  check('processes that exited by themselves', crashes.length === 0 ? '0' : crashes.join(', '), crashes.length === 0);
  const badStops = sigtermExits.filter((s) => s.exit.forced || s.exit.code !== 0);
  check(
    'SIGTERM stops that did not exit 0 in time',
    badStops.length === 0 ? `0 of ${sigtermExits.length}` : badStops.map((s) => `${s.label}: ${s.exit.forced ? 'killed' : (s.exit.signal ?? `code ${s.exit.code}`)}`).join(', '),
    badStops.length === 0,
  );
  const termFailures = results.filter((f) => f.spec.kind === 'term').reduce((sum, f) => sum + (byWindow.get(f) ?? []).filter((r) => !r.ok).length, 0);
  check('failed API requests during SIGTERM rolls', String(termFailures), termFailures === 0);
  const unrecovered = results.filter((f) => f.recoveredMs === null).map((f) => f.spec.id);
  check('faults not recovered in time', unrecovered.length === 0 ? '0' : unrecovered.join(', '), unrecovered.length === 0);
  check('API requests sent / observations published', `${records.filter((r) => r.start <= loadEnd).length} / ${totals.published}`, true);
  check('wall time', `${elapsed.toFixed(0)} s`, true);
}

/** The end state, checked once everything has settled and stopped. */
export async function checkEndState(
  drill: Drill,
  stack: Stack,
  load: ApiLoad,
  results: FaultResult[],
  table: FaultTable,
  totals: { auctions: number; loadEnd: number; published: number; elapsed: number },
): Promise<Check[]> {
  const checks: Check[] = [];
  const check = (what: string, value: string, ok: boolean) => checks.push([what, value, ok]);
  const like = `${drill.tag}-%`;
  await checkAuctions(drill.pool, like, totals.auctions, check);
  await checkEvents(drill.pool, like, check);
  await checkDeliveries(drill, check);
  await checkApiLedger(drill, results, load.countedByClient, check);
  checkRun(stack, load, results, table, totals, check);
  return checks;
}
