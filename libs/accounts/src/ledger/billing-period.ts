/** A billing period: one calendar month in UTC. */
export interface BillingPeriod {
  /** The ledger's `period` value: first day of the month, `YYYY-MM-DD`. */
  key: string;
  start: Date;
  /** Start of the next period: when the allowance resets. */
  end: Date;
}

export function billingPeriod(now: Date = new Date()): BillingPeriod {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { key: start.toISOString().slice(0, 10), start, end };
}
