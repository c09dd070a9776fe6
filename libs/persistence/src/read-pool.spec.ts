import { ErrorNames, rpcError } from '@cars/contracts';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { lastValueFrom } from 'rxjs';
import { CostlyTurns, isStatementTimeout, NoTurnError, StatementTimeoutReplies } from './read-pool';

describe('CostlyTurns', () => {
  it('runs at most `capacity` at once, the others in order as turns free up', async () => {
    const turns = new CostlyTurns(1, 10_000);
    const order: string[] = [];
    let release!: () => void;
    const first = turns.run(() => new Promise<void>((resolve) => (release = resolve)).then(() => order.push('first')));
    const second = turns.run(async () => order.push('second'));
    const third = turns.run(async () => order.push('third'));
    await Promise.resolve();
    expect(order).toEqual([]);
    release();
    await Promise.all([first, second, third]);
    expect(order).toEqual(['first', 'second', 'third']);
  });

  it('gives a turn back when the work fails, and refuses a wait longer than maxWaitMs', async () => {
    jest.useFakeTimers();
    try {
      const turns = new CostlyTurns(1, 500);
      await expect(turns.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
      let release!: () => void;
      const holding = turns.run(() => new Promise<void>((resolve) => (release = resolve)));
      const waiting = turns.run(async () => 'never');
      jest.advanceTimersByTime(500);
      await expect(waiting).rejects.toBeInstanceOf(NoTurnError);
      release();
      await holding;
      await expect(turns.run(async () => 'next')).resolves.toBe('next');
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('isStatementTimeout', () => {
  it('knows PostgreSQL stopping a statement at statement_timeout from an operator cancel', () => {
    const pgError = (message: string) => Object.assign(new Error(message), { code: '57014' });
    expect(isStatementTimeout(pgError('canceling statement due to statement timeout'))).toBe(true);
    expect(isStatementTimeout(pgError('canceling statement due to user request'))).toBe(false);
    expect(isStatementTimeout(new Error('statement timeout'))).toBe(false);
  });
});

describe('StatementTimeoutReplies', () => {
  const host = new ExecutionContextHost([]);
  host.setType('rpc');
  const reply = (error: unknown) => lastValueFrom(new StatementTimeoutReplies().catch(error, host));

  it('answers a statement stopped at the timeout, or one that got no turn, with a 503 reply naming the cause', async () => {
    const timedOut = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    await expect(reply(timedOut)).resolves.toEqual(
      rpcError(503, { error: ErrorNames.ServiceUnavailable, message: expect.stringContaining('The query took too long') }),
    );
    await expect(reply(new NoTurnError(500))).resolves.toEqual(
      rpcError(503, { error: ErrorNames.ServiceUnavailable, message: expect.stringContaining('Too many broad keyword searches') }),
    );
  });

  it('leaves any other error to Nest: an error packet, not a reply', async () => {
    const cancelled = Object.assign(new Error('canceling statement due to user request'), { code: '57014' });
    await expect(reply(cancelled)).rejects.toEqual({ status: 'error', message: 'Internal server error' });
  });
});
