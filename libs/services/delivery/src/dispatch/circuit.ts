import { WEBHOOK_CIRCUIT_STATES, WebhookCircuitState } from '@cars/contracts';

/** An endpoint's circuit: `closed` (claimed as usual), `open` (nothing claimed until its probe is due), `half_open` (one probe in flight). */
export const CIRCUIT_STATES = WEBHOOK_CIRCUIT_STATES;
export type CircuitState = WebhookCircuitState;

export interface CircuitPolicy {
  /** Failed attempts in a row that open a closed circuit. */
  failures: number;
  /** The first open period, ms; doubled at each reopening… */
  backoffMs: number;
  /** …up to this, ms. */
  maxBackoffMs: number;
}

/** An endpoint's health and circuit as the row holds them. */
export interface CircuitBefore {
  consecutiveFailures: number;
  state: CircuitState;
  /** Opens in a row since the circuit last closed. */
  opens: number;
}

/** One recorded batch's attempts of one endpoint, in the order they finished. */
export interface AttemptTally {
  succeeded: number;
  failed: number;
  /** Failures after the batch's last success (all of them when none succeeded). */
  tail: number;
  /** The circuit's probe was among the failures. */
  probeFailed: boolean;
}

export interface CircuitAfter {
  consecutiveFailures: number;
  state: CircuitState;
  opens: number;
  /** Set when the circuit (re)opens now: how long it stays open, ms. */
  openForMs: number | null;
}

/**
 * The circuit after a batch of attempts: failures in a row reaching `failures` open a closed
 * circuit; a failed probe reopens a half-open one for twice as long as the last time (capped);
 * a success closes it, whatever its state (an attempt in flight when it opened may succeed).
 */
export function afterAttempts(before: CircuitBefore, tally: AttemptTally, policy: CircuitPolicy): CircuitAfter {
  const consecutiveFailures = tally.succeeded > 0 ? tally.tail : before.consecutiveFailures + tally.failed;
  const opens =
    tally.tail > 0 &&
    ((before.state === 'closed' && consecutiveFailures >= policy.failures) || (before.state === 'half_open' && tally.probeFailed));
  if (opens) {
    const reopenings = before.state === 'closed' ? 0 : before.opens;
    return {
      consecutiveFailures,
      state: 'open',
      opens: reopenings + 1,
      openForMs: Math.min(policy.backoffMs * 2 ** reopenings, policy.maxBackoffMs),
    };
  }
  if (tally.succeeded > 0) return { consecutiveFailures, state: 'closed', opens: 0, openForMs: null };
  return { consecutiveFailures, state: before.state, opens: before.opens, openForMs: null };
}
