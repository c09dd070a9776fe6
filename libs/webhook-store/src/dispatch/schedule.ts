import { DELIVERY_MAX_ATTEMPTS } from '@cars/contracts';

/**
 * When the next attempt is due after a failure, in SQL over the delivery row `d` *before* the
 * attempt is counted, so the sweep that recovers interrupted attempts and the recording of a
 * failed one share it. The position in the current budget of six (a manual retry starts a new
 * one) picks the delay: `$delays[position + 1]` seconds, ± `$jitter` at random.
 */
export function nextAttemptSql(delaysParam: string, jitterParam: string): string {
  const position = `(d.attempts - (d.max_attempts - ${DELIVERY_MAX_ATTEMPTS}))`;
  return `now() + make_interval(secs => (${delaysParam}::float8[])[least(greatest(${position}, 0), ${DELIVERY_MAX_ATTEMPTS - 2}) + 1]
    * (1 + ${jitterParam}::float8 * (random() * 2 - 1)))`;
}

/** The delays as the SQL parameter: seconds. */
export function delaysInSeconds(delaysMs: readonly number[]): number[] {
  return delaysMs.map((ms) => ms / 1000);
}
