import { firstRow, Sql } from '@cars/persistence';
import { effectiveLimitSql } from '../plans/plans';
import { BillingPeriod, billingPeriod } from './billing-period';

/**
 * The monthly allowance: one `usage_ledger` row per account and billing period, shared by API
 * requests and (later) webhook deliveries. Work in flight holds a reservation:
 *
 *   reserveUsage  → used + reserved + units ≤ limit, else rejected        (reserved += units)
 *   commitUsage   → the work counted                                      (used += units, reserved -= units)
 *   releaseUsage  → the work must not count                               (reserved -= units)
 *
 * Each step is atomic under any concurrency: a reservation is one conditional UPDATE
 * (`… WHERE used + reserved + units <= limit RETURNING`); only when that finds no row (first use
 * in the period, or no room) does it run a conditional upsert (INSERT … ON CONFLICT DO UPDATE …
 * WHERE), which creates the row or locks the latest row version and re-checks the limit.
 *
 * Every function takes a pg pool (the process's, `PG_POOL`), the client of the caller's
 * transaction (the delivery worker can reserve in the transaction that claims a delivery, and
 * record on the delivery that it holds a reservation: a crash then leaves evidence to release
 * from), or the ledger pool (`createLedgerPool`: asynchronous commit, what the gateway uses on the
 * request path).
 */

/**
 * What a unit is for. `request`: an API request metered by a gateway (its commits also count in
 * the row's `requests` column, so the account area can split usage); units without a kind are
 * webhook deliveries (the delivery worker's).
 */
export type UsageKind = 'request';

export interface Reservation {
  accountId: string;
  /** The period the units were reserved in: commit and release go to the same row. */
  period: string;
  units: number;
  kind?: UsageKind;
}

export type ReserveResult =
  | {
      ok: true;
      reservation: Reservation;
      limit: number;
      /** used + reserved after this reservation. */
      consumed: number;
      /** limit − consumed, never negative. */
      remaining: number;
      periodEnd: Date;
    }
  | { ok: false; limit: number; remaining: 0; periodEnd: Date };

export interface Usage {
  accountId: string;
  period: string;
  used: number;
  reserved: number;
}

/** Usage split by what counted it (the account area's meter). */
export interface UsageBreakdown extends Usage {
  /** Units of `used` committed as API requests by a gateway (at most `used`). */
  requests: number;
  /** The rest of `used`: successful webhook deliveries (and units an operator set with `usage:set`). */
  deliveries: number;
}

export interface ReserveOptions {
  accountId: string;
  /** The monthly limit of the account's effective plan. */
  limit: number;
  units?: number;
  now?: Date;
  kind?: UsageKind;
}

export async function reserveUsage(db: Sql, options: ReserveOptions): Promise<ReserveResult> {
  const units = options.units ?? 1;
  const period: BillingPeriod = billingPeriod(options.now);
  const params = [options.accountId, period.key, units, options.limit];
  // The common case: the period's row exists and has room.
  let row = await firstRow<{ used: number; reserved: number }>(
    db,
    `WITH u AS (
       UPDATE usage_ledger SET reserved = reserved + $3::int, updated_at = now()
        WHERE account_id = $1 AND period = $2::date AND used + reserved + $3::int <= $4::int
       RETURNING used, reserved
     ) SELECT used, reserved FROM u`,
    params,
  );
  // No row yet this period, or no room: the upsert creates the row if it is missing and otherwise
  // re-checks the limit on the latest row version (a concurrent request may have created it).
  row ??= await firstRow<{ used: number; reserved: number }>(
    db,
    `INSERT INTO usage_ledger AS l (account_id, period, used, reserved)
     SELECT $1, $2::date, 0, $3::int WHERE $3::int <= $4::int
     ON CONFLICT (account_id, period) DO UPDATE
        SET reserved = l.reserved + EXCLUDED.reserved, updated_at = now()
      WHERE l.used + l.reserved + EXCLUDED.reserved <= $4::int
     RETURNING l.used, l.reserved`,
    params,
  );
  if (!row) return { ok: false, limit: options.limit, remaining: 0, periodEnd: period.end };
  const consumed = row.used + row.reserved;
  return {
    ok: true,
    reservation: { accountId: options.accountId, period: period.key, units, ...(options.kind ? { kind: options.kind } : {}) },
    limit: options.limit,
    consumed,
    remaining: Math.max(0, options.limit - consumed),
    periodEnd: period.end,
  };
}

/**
 * `units` reserved under the limit of the account's plan in force (`effectivePlan`), read and
 * reserved in one statement: the common case of `planInForce` followed by `reserveUsage`, one round
 * trip instead of two. `reservation` is null when this statement could not reserve them — no row
 * yet this period, or not room for all — and the caller goes on with `reserveUsage` and the limit
 * returned (which creates the row, or finds the room left). Null when there is no such account.
 */
export async function reserveUnderPlan(
  db: Sql,
  options: { accountId: string; units: number; now?: Date },
): Promise<{ limit: number; reservation: Reservation | null } | null> {
  const period = billingPeriod(options.now);
  const row = await firstRow<{ monthly_limit: number; reserved: boolean }>(db, RESERVE_UNDER_PLAN, [options.accountId, period.key, options.units]);
  if (!row) return null;
  return {
    limit: row.monthly_limit,
    reservation: row.reserved ? { accountId: options.accountId, period: period.key, units: options.units } : null,
  };
}

/** Named: the delivery worker's fan-out and claims run it in every transaction that leases. */
const RESERVE_UNDER_PLAN = {
  name: 'ledger-reserve-under-plan',
  text: `WITH account AS (
       SELECT ${effectiveLimitSql('a')} AS monthly_limit FROM accounts a WHERE a.id = $1
     ), reserved AS (
       UPDATE usage_ledger l SET reserved = l.reserved + $3::int, updated_at = now()
         FROM account
        WHERE l.account_id = $1 AND l.period = $2::date AND l.used + l.reserved + $3::int <= account.monthly_limit
       RETURNING 1
     )
     SELECT account.monthly_limit, EXISTS (SELECT 1 FROM reserved) AS reserved FROM account`,
};

/** The reserved units counted. False when there was no such reservation to commit (a bug upstream). */
export async function commitUsage(db: Sql, reservation: Reservation): Promise<boolean> {
  const row = await firstRow<{ used: number }>(db, COMMIT_USAGE, [
    reservation.accountId,
    reservation.period,
    reservation.units,
    reservation.kind === 'request',
  ]);
  return row !== null;
}

/** Named: every recording of delivery outcomes runs it. */
const COMMIT_USAGE = {
  name: 'ledger-commit-usage',
  text: `WITH u AS (
       UPDATE usage_ledger
          SET used = used + $3, reserved = reserved - $3, requests = requests + CASE WHEN $4 THEN $3 ELSE 0 END, updated_at = now()
        WHERE account_id = $1 AND period = $2::date AND reserved >= $3
       RETURNING used
     ) SELECT used FROM u`,
};

/** The reserved units are given back. False when there was no such reservation to release. */
export async function releaseUsage(db: Sql, reservation: Reservation): Promise<boolean> {
  const row = await firstRow<{ reserved: number }>(
    db,
    `WITH u AS (
       UPDATE usage_ledger SET reserved = reserved - $3, updated_at = now()
        WHERE account_id = $1 AND period = $2::date AND reserved >= $3
       RETURNING reserved
     ) SELECT reserved FROM u`,
    [reservation.accountId, reservation.period, reservation.units],
  );
  return row !== null;
}

/** Usage of the period containing `now` (zeros when nothing was used yet). */
export async function getUsage(db: Sql, accountId: string, now: Date = new Date()): Promise<Usage> {
  const period = billingPeriod(now).key;
  const row = await firstRow<{ used: number; reserved: number }>(
    db,
    `SELECT used, reserved FROM usage_ledger WHERE account_id = $1 AND period = $2::date`,
    [accountId, period],
  );
  return { accountId, period, used: row?.used ?? 0, reserved: row?.reserved ?? 0 };
}

/** Usage of the period containing `now`, split into requests and deliveries. */
export async function getUsageBreakdown(db: Sql, accountId: string, now: Date = new Date()): Promise<UsageBreakdown> {
  const period = billingPeriod(now).key;
  const row = await firstRow<{ used: number; reserved: number; requests: number }>(
    db,
    `SELECT used, reserved, requests FROM usage_ledger WHERE account_id = $1 AND period = $2::date`,
    [accountId, period],
  );
  const used = row?.used ?? 0;
  const requests = Math.min(used, row?.requests ?? 0);
  return { accountId, period, used, reserved: row?.reserved ?? 0, requests, deliveries: used - requests };
}

/** Sets the units used in the current period (operators and tests); reservations are left alone. */
export async function setUsedUnits(db: Sql, accountId: string, used: number, now: Date = new Date()): Promise<Usage> {
  const period = billingPeriod(now).key;
  const row = await firstRow<{ used: number; reserved: number }>(
    db,
    `INSERT INTO usage_ledger AS l (account_id, period, used, reserved) VALUES ($1, $2::date, $3, 0)
     ON CONFLICT (account_id, period) DO UPDATE SET used = EXCLUDED.used, updated_at = now()
     RETURNING l.used, l.reserved`,
    [accountId, period, used],
  );
  return { accountId, period, used: row!.used, reserved: row!.reserved };
}
