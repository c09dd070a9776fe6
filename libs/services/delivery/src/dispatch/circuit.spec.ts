import { afterAttempts, CircuitBefore } from './circuit';

const policy = { failures: 5, backoffMs: 30_000, maxBackoffMs: 600_000 };
const closed: CircuitBefore = { consecutiveFailures: 0, state: 'closed', opens: 0 };
const tally = (succeeded: number, failed: number, tail = failed, probeFailed = false) => ({ succeeded, failed, tail, probeFailed });

describe('afterAttempts (an endpoint circuit)', () => {
  it('opens a closed circuit when failures in a row reach the threshold, for the first backoff', () => {
    expect(afterAttempts(closed, tally(0, 4), policy)).toEqual({ consecutiveFailures: 4, state: 'closed', opens: 0, openForMs: null });
    expect(afterAttempts({ ...closed, consecutiveFailures: 4 }, tally(0, 1), policy)).toEqual({
      consecutiveFailures: 5,
      state: 'open',
      opens: 1,
      openForMs: 30_000,
    });
    // A success before the batch's last failures counts only those after it.
    expect(afterAttempts({ ...closed, consecutiveFailures: 4 }, tally(1, 3, 2), policy)).toMatchObject({ consecutiveFailures: 2, state: 'closed' });
  });

  it('reopens after a failed probe for twice as long as the last time, up to the cap', () => {
    const halfOpen = (opens: number): CircuitBefore => ({ consecutiveFailures: 9, state: 'half_open', opens });
    expect(afterAttempts(halfOpen(1), tally(0, 1, 1, true), policy)).toMatchObject({ state: 'open', opens: 2, openForMs: 60_000 });
    expect(afterAttempts(halfOpen(4), tally(0, 1, 1, true), policy)).toMatchObject({ state: 'open', opens: 5, openForMs: 480_000 });
    expect(afterAttempts(halfOpen(5), tally(0, 1, 1, true), policy)).toMatchObject({ state: 'open', opens: 6, openForMs: 600_000 });
    // A late failure of an attempt sent before the circuit opened is not the probe's.
    expect(afterAttempts(halfOpen(2), tally(0, 1), policy)).toMatchObject({ state: 'half_open', opens: 2, openForMs: null });
  });

  it('closes on any success and keeps an open circuit open through late failures', () => {
    expect(afterAttempts({ consecutiveFailures: 7, state: 'half_open', opens: 3 }, tally(1, 0, 0), policy)).toEqual({
      consecutiveFailures: 0,
      state: 'closed',
      opens: 0,
      openForMs: null,
    });
    expect(afterAttempts({ consecutiveFailures: 7, state: 'open', opens: 1 }, tally(0, 2), policy)).toEqual({
      consecutiveFailures: 9,
      state: 'open',
      opens: 1,
      openForMs: null,
    });
  });
});
