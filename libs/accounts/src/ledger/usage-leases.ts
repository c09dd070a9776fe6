import { rows, Sql } from '@cars/persistence';
import { BillingPeriod, billingPeriod } from './billing-period';

/**
 * Leases: a block of allowance reserved in `usage_ledger` in one statement, spent by its holder
 * (a gateway) in memory, settled back in bulk (docs/adr/0007-metering-leases.md).
 *
 * A lease's units sit in the ledger row's `reserved` like any reservation, so every reader of
 * the row — the gateway's next grant, the delivery worker's reservations, the account overview —
 * sees them as taken, and `used + reserved ≤ limit` holds under any concurrency as before.
 * `usage_leases.units` records how many of the row's reserved units the lease holds, so that:
 *
 *   leaseUsage          → reserved += n, lease.units += n   (n ≤ the room left, smaller near the limit)
 *   settleLease         → used += spent, reserved −= spent + returned, lease.units −= the same
 *   releaseExpiredLeases→ a lease not renewed by its `expires_at` (its holder died) gives back
 *                          every unit it still holds: reserved −= lease.units
 *
 * Units a holder spent but had not settled when it died are given back too: those requests are
 * not counted (the error is in the customer's favour, bounded by one lease).
 */

export interface LeaseOptions {
  /** Chosen by the holder (a UUID); a grant to an existing lease adds to it. */
  leaseId: string;
  accountId: string;
  /** The monthly limit of the account's effective plan. */
  limit: number;
  /** Units asked for; the grant is smaller near the limit (see `shareOfRoom`). */
  want: number;
  /**
   * A grant takes at most 1/shareOfRoom of the room left (at least one unit): as the account
   * nears its limit the blocks shrink, down to one unit at a time — so units a holder has not
   * spent yet cannot keep another holder's request from the last of the allowance for long.
   */
  shareOfRoom: number;
  /** How long the lease lives without a renewal (a settlement renews it). */
  ttlMs: number;
  /** Who holds it (a gateway instance), for operators. */
  holder: string;
  now?: Date;
}

/** One lease's grant in a batch (`leaseUsageBatch`). */
export interface LeaseRequest {
  leaseId: string;
  accountId: string;
  /** The billing period the units are of. */
  period: Pick<BillingPeriod, 'key' | 'end'>;
  limit: number;
  want: number;
}

/** What every grant of a batch shares. */
export interface LeaseBatchOptions {
  shareOfRoom: number;
  ttlMs: number;
  holder: string;
}

export type LeaseGrant =
  | { ok: true; period: string; periodEnd: Date; units: number; limit: number; /** used + reserved after the grant. */ consumed: number }
  | { ok: false; period: string; periodEnd: Date; limit: number };

/**
 * Grants to many leases (of different accounts) in one statement. The ledger rows are locked in
 * (account, period) order — the order every other writer of several rows takes them in — before
 * any is updated, so two batches (or a batch and a delivery worker's settlement) cannot deadlock;
 * each row's room is read under its lock, so the room a grant sees is the room it takes.
 */
const GRANT = `
  WITH req AS (
    SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::date[], $4::int[], $5::int[]) AS r(lease_id, account_id, period, want, lim)
  ), cur AS (
    SELECT l.account_id, l.period, r.lease_id,
           LEAST(r.want, GREATEST(1, (r.lim - l.used - l.reserved) / $6::int)) AS n
      FROM usage_ledger l JOIN req r ON r.account_id = l.account_id AND r.period = l.period
     WHERE l.used + l.reserved < r.lim
     ORDER BY l.account_id, l.period
       FOR UPDATE OF l
  ), upd AS (
    UPDATE usage_ledger l SET reserved = l.reserved + cur.n, updated_at = now()
      FROM cur
     WHERE l.account_id = cur.account_id AND l.period = cur.period
    RETURNING cur.lease_id, l.account_id, l.period, l.used, l.reserved, cur.n
  ), lease AS (
    INSERT INTO usage_leases AS s (id, account_id, period, units, holder, expires_at)
    SELECT lease_id, account_id, period, n, $7, now() + $8::int * interval '1 millisecond' FROM upd
    ON CONFLICT (id) DO UPDATE SET units = s.units + EXCLUDED.units, expires_at = EXCLUDED.expires_at
  )
  SELECT lease_id, used, reserved, n FROM upd`;

/**
 * Reserves up to `want` units for the lease, or refuses when the period's allowance has no unit
 * left: `leaseUsageBatch` with one request.
 */
export async function leaseUsage(db: Sql, options: LeaseOptions): Promise<LeaseGrant> {
  const [grant] = await leaseUsageBatch(
    db,
    [{ leaseId: options.leaseId, accountId: options.accountId, period: billingPeriod(options.now), limit: options.limit, want: options.want }],
    options,
  );
  return grant;
}

/**
 * Reserves up to `want` units for each lease (in the order given), or refuses a lease whose
 * period's allowance has no unit left. One statement when every period's row exists and has room;
 * otherwise the missing rows are created (waiting for a concurrent first grant's insert, if any)
 * and the grants that got nothing tried once more: no room is then the answer. Two leases of one
 * account and period in a batch go to separate statements (a row is updated once per statement).
 */
export async function leaseUsageBatch(db: Sql, requests: readonly LeaseRequest[], options: LeaseBatchOptions): Promise<LeaseGrant[]> {
  const grants = new Map<number, LeaseGrant>();
  let left = requests.map((request, index) => ({ request, index }));
  let missingRowsCreated = false;
  while (left.length > 0) {
    // One request per ledger row in each statement; the others wait for the next.
    const rowsTaken = new Set<string>();
    const now: typeof left = [];
    const later: typeof left = [];
    for (const entry of left) {
      const row = `${entry.request.accountId}|${entry.request.period.key}`;
      if (rowsTaken.has(row)) later.push(entry);
      else {
        rowsTaken.add(row);
        now.push(entry);
      }
    }
    const granted = await grantOnce(db, now.map((e) => e.request), options);
    const refused = now.filter((e) => !granted.has(e.request.leaseId));
    if (refused.length > 0 && !missingRowsCreated) {
      missingRowsCreated = true;
      await createMissingRows(db, refused.map((e) => e.request));
      const again = await grantOnce(db, refused.map((e) => e.request), options);
      for (const [id, grant] of again) granted.set(id, grant);
    }
    for (const { request, index } of now) {
      const row = granted.get(request.leaseId);
      grants.set(
        index,
        row
          ? { ok: true, period: request.period.key, periodEnd: request.period.end, units: row.n, limit: request.limit, consumed: row.used + row.reserved }
          : { ok: false, period: request.period.key, periodEnd: request.period.end, limit: request.limit },
      );
    }
    left = later;
  }
  return requests.map((_, index) => grants.get(index)!);
}

async function grantOnce(
  db: Sql,
  requests: readonly LeaseRequest[],
  options: LeaseBatchOptions,
): Promise<Map<string, { used: number; reserved: number; n: number }>> {
  const granted = await rows<{ lease_id: string; used: number; reserved: number; n: number }>(db, GRANT, [
    requests.map((r) => r.leaseId),
    requests.map((r) => r.accountId),
    requests.map((r) => r.period.key),
    requests.map((r) => Math.max(1, r.want)),
    requests.map((r) => r.limit),
    Math.max(1, options.shareOfRoom),
    options.holder,
    options.ttlMs,
  ]);
  return new Map(granted.map((row) => [row.lease_id, row]));
}

/** The periods' ledger rows, created where missing (in key order, as every writer takes them). */
async function createMissingRows(db: Sql, requests: readonly LeaseRequest[]): Promise<void> {
  await db.query(
    `INSERT INTO usage_ledger (account_id, period, used, reserved)
     SELECT DISTINCT account_id, period, 0, 0 FROM unnest($1::uuid[], $2::date[]) AS r(account_id, period)
      ORDER BY account_id, period
     ON CONFLICT (account_id, period) DO NOTHING`,
    [requests.map((r) => r.accountId), requests.map((r) => r.period.key)],
  );
}

export interface LeaseSettlement {
  leaseId: string;
  /** Units spent on work that counts: they move from reserved to used. */
  spent: number;
  /** Units given back (not spent): they leave reserved. Ignored when `close` (all the rest goes back). */
  returned: number;
  /** What the spent units were: `request` also counts them in the row's `requests`. */
  kind?: 'request';
  /** True: the lease ends (its row is deleted, every unit it still holds beyond `spent` goes back). */
  close: boolean;
  /** A lease that stays is renewed for this long. */
  ttlMs: number;
}

/**
 * Settles many leases in one statement: per lease, spent units move from reserved to used (and
 * `requests`, for request units), returned ones leave reserved, and the lease is renewed for
 * `ttlMs` or — closing — deleted with every unit it still holds given back. The ledger rows are
 * locked in (account, period) order before any is updated, and each row is updated once with the
 * sums of its leases. A settlement that asks for more than its lease holds changes nothing.
 * Returns the ids of the leases settled; a missing one expired and was swept, and its units are
 * back in the allowance: its spent units then do not count.
 */
const SETTLE = `
  WITH s AS (
    SELECT * FROM unnest($1::uuid[], $2::int[], $3::int[], $4::boolean[], $5::boolean[]) AS s(id, spent, returned, close, request)
  ), locked AS (
    SELECT u.account_id, u.period FROM usage_ledger u
     WHERE (u.account_id, u.period) IN (SELECT l.account_id, l.period FROM usage_leases l JOIN s ON s.id = l.id)
     ORDER BY u.account_id, u.period
       FOR UPDATE OF u
  ), closed AS (
    DELETE FROM usage_leases l USING s
     WHERE l.id = s.id AND s.close AND l.units >= s.spent
    RETURNING l.id, l.account_id, l.period, l.units AS moved, s.spent, s.request
  ), kept AS (
    UPDATE usage_leases l SET units = l.units - (s.spent + s.returned), expires_at = now() + $6::int * interval '1 millisecond'
      FROM s
     WHERE l.id = s.id AND NOT s.close AND l.units >= s.spent + s.returned
    RETURNING l.id, l.account_id, l.period, s.spent + s.returned AS moved, s.spent, s.request
  ), settled AS (
    SELECT * FROM closed UNION ALL SELECT * FROM kept
  ), t AS (
    SELECT account_id, period, sum(spent)::int AS spent, sum(CASE WHEN request THEN spent ELSE 0 END)::int AS requests, sum(moved)::int AS moved
      FROM settled GROUP BY account_id, period
  ), upd AS (
    UPDATE usage_ledger u
       SET used = u.used + t.spent, requests = u.requests + t.requests, reserved = u.reserved - t.moved, updated_at = now()
      FROM t JOIN locked k ON k.account_id = t.account_id AND k.period = t.period
     WHERE u.account_id = t.account_id AND u.period = t.period
  )
  SELECT id FROM settled`;

/** One lease's settlement (`settleLeases` with one): false when the lease no longer exists. */
export async function settleLease(db: Sql, s: LeaseSettlement): Promise<boolean> {
  return (await settleLeases(db, [s])).has(s.leaseId);
}

/**
 * Settles (renews or closes) many leases, in one statement when each lease appears once (a
 * lease's row is written once per statement: a second settlement of it goes to the next).
 * Returns the ids of the leases that still existed.
 */
export async function settleLeases(db: Sql, settlements: readonly LeaseSettlement[]): Promise<Set<string>> {
  const known = new Set<string>();
  let left = settlements;
  while (left.length > 0) {
    const ids = new Set<string>();
    const now: LeaseSettlement[] = [];
    const later: LeaseSettlement[] = [];
    for (const s of left) {
      if (ids.has(s.leaseId)) later.push(s);
      else {
        ids.add(s.leaseId);
        now.push(s);
      }
    }
    left = later;
    const settled = await rows<{ id: string }>(db, SETTLE, [
      now.map((s) => s.leaseId),
      now.map((s) => s.spent),
      now.map((s) => (s.close ? 0 : s.returned)),
      now.map((s) => s.close),
      now.map((s) => s.kind === 'request'),
      Math.max(...now.map((s) => s.ttlMs)),
    ]);
    for (const row of settled) known.add(row.id);
  }
  return known;
}

/**
 * Gives back the units of every lease past its `expires_at` (of one account, or all): their
 * holders died or lost the database. The units released.
 */
export async function releaseExpiredLeases(db: Sql, accountId?: string): Promise<number> {
  const released = await rows<{ units: number }>(
    db,
    `WITH x AS (
       DELETE FROM usage_leases WHERE expires_at < now() AND ($1::uuid IS NULL OR account_id = $1::uuid)
       RETURNING account_id, period, units
     ), t AS (
       SELECT account_id, period, sum(units)::int AS units FROM x GROUP BY account_id, period
     )
     UPDATE usage_ledger u SET reserved = GREATEST(0, u.reserved - t.units), updated_at = now()
       FROM t
      WHERE u.account_id = t.account_id AND u.period = t.period
     RETURNING t.units`,
    [accountId ?? null],
  );
  return released.reduce((sum, r) => sum + r.units, 0);
}
