import { firstRow, rows, Sql } from '@cars/persistence';
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

export type LeaseGrant =
  | { ok: true; period: string; periodEnd: Date; units: number; limit: number; /** used + reserved after the grant. */ consumed: number }
  | { ok: false; period: string; periodEnd: Date; limit: number };

const GRANT = `
  WITH cur AS (
    SELECT LEAST($3::int, GREATEST(1, ($4::int - used - reserved) / $5::int)) AS n
      FROM usage_ledger
     WHERE account_id = $1 AND period = $2::date AND used + reserved < $4::int
       FOR UPDATE
  ), upd AS (
    UPDATE usage_ledger l SET reserved = l.reserved + cur.n, updated_at = now()
      FROM cur
     WHERE l.account_id = $1 AND l.period = $2::date
    RETURNING l.used, l.reserved, cur.n
  ), lease AS (
    INSERT INTO usage_leases AS s (id, account_id, period, units, holder, expires_at)
    SELECT $6::uuid, $1, $2::date, n, $7, now() + $8::int * interval '1 millisecond' FROM upd
    ON CONFLICT (id) DO UPDATE SET units = s.units + EXCLUDED.units, expires_at = EXCLUDED.expires_at
  )
  SELECT used, reserved, n FROM upd`;

/**
 * Reserves up to `want` units for the lease, or refuses when the period's allowance has no unit
 * left. One statement when the period's row exists and has room (it locks the row, so the room it
 * sees is the room it takes); otherwise the row is created if missing and the grant tried again.
 */
export async function leaseUsage(db: Sql, options: LeaseOptions): Promise<LeaseGrant> {
  const period: BillingPeriod = billingPeriod(options.now);
  const params = [
    options.accountId,
    period.key,
    Math.max(1, options.want),
    options.limit,
    Math.max(1, options.shareOfRoom),
    options.leaseId,
    options.holder,
    options.ttlMs,
  ];
  let row = await firstRow<{ used: number; reserved: number; n: number }>(db, GRANT, params);
  if (!row) {
    // No row yet this period, or no room. Create the row if it is missing (waiting for a
    // concurrent first grant's insert, if any), then try once more: no room is then the answer.
    await db.query(
      `INSERT INTO usage_ledger (account_id, period, used, reserved) VALUES ($1, $2::date, 0, 0)
       ON CONFLICT (account_id, period) DO NOTHING`,
      [options.accountId, period.key],
    );
    row = await firstRow<{ used: number; reserved: number; n: number }>(db, GRANT, params);
  }
  if (!row) return { ok: false, period: period.key, periodEnd: period.end, limit: options.limit };
  return { ok: true, period: period.key, periodEnd: period.end, units: row.n, limit: options.limit, consumed: row.used + row.reserved };
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
 * Settles spent units and gives back unspent ones in one statement; renews (or, `close`, ends)
 * the lease. False when the lease no longer exists — it expired and was swept, and its units are
 * back in the allowance: the spent units then do not count.
 */
export async function settleLease(db: Sql, s: LeaseSettlement): Promise<boolean> {
  // $1 lease, $2 spent, $3 is it requests; closing: every unit the lease holds leaves `reserved`,
  // else $4 returned units leave it too and the lease is renewed for $5 ms.
  const lease = s.close
    ? `DELETE FROM usage_leases WHERE id = $1 AND units >= $2::int RETURNING account_id, period, units AS moved`
    : `UPDATE usage_leases SET units = units - ($2::int + $4::int), expires_at = now() + $5::int * interval '1 millisecond'
        WHERE id = $1 AND units >= $2::int + $4::int
       RETURNING account_id, period, $2::int + $4::int AS moved`;
  const params: unknown[] = [s.leaseId, s.spent, s.kind === 'request'];
  if (!s.close) params.push(s.returned, s.ttlMs);
  const row = await firstRow<{ used: number }>(
    db,
    `WITH s AS (${lease})
     UPDATE usage_ledger u
        SET used = u.used + $2::int, requests = u.requests + CASE WHEN $3::boolean THEN $2::int ELSE 0 END,
            reserved = u.reserved - s.moved, updated_at = now()
       FROM s
      WHERE u.account_id = s.account_id AND u.period = s.period
     RETURNING u.used`,
    params,
  );
  return row !== null;
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
