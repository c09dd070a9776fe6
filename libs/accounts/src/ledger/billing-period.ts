/** A billing period: one calendar month in UTC. */
export interface BillingPeriod {
  /** The ledger's `period` value: first day of the month, `YYYY-MM-DD`. */
  key: string;
  start: Date;
  /** Start of the next period: when the allowance resets. */
  end: Date;
}

/** The period of the last call: every counted request asks, and nearly all of them ask within it. */
let last: BillingPeriod | undefined;

export function billingPeriod(now: Date = new Date()): BillingPeriod {
  const at = now.getTime();
  if (last && at >= last.start.getTime() && at < last.end.getTime()) return last;
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  const period = Object.freeze({ key: start.toISOString().slice(0, 10), start, end });
  last = period;
  return period;
}
