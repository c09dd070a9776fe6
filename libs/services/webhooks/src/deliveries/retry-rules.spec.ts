import { DELIVERY_STATUSES } from '@cars/contracts';
import { endpointsToPause, retryDecision } from './retry-rules';

describe('retry rules', () => {
  it('gives a failed delivery a new budget of six on top of the attempts made', () => {
    expect(retryDecision({ status: 'failed', attempts: 6 })).toEqual({ ok: true, maxAttempts: 12 });
  });

  it('sends now a pending delivery waiting for its next automatic retry, with a fresh budget', () => {
    expect(retryDecision({ status: 'pending', attempts: 2 })).toEqual({ ok: true, maxAttempts: 8 });
  });

  it('refuses every other state with a reason', () => {
    const refused = DELIVERY_STATUSES.map((status) => ({ status, decision: retryDecision({ status, attempts: 0 }) }))
      .filter(({ decision }) => !decision.ok)
      .map(({ status }) => status);
    expect(refused).toEqual(['pending', 'sending', 'succeeded', 'canceled']);
    expect(retryDecision({ status: 'sending', attempts: 1 })).toMatchObject({ ok: false, reason: expect.stringContaining('in flight') });
  });
});

describe('endpoints kept after a plan change', () => {
  const at = (day: number) => new Date(Date.UTC(2026, 0, day));
  const active = [
    { id: 'c', createdAt: at(3) },
    { id: 'a', createdAt: at(1) },
    { id: 'b', createdAt: at(2) },
  ];

  it('keeps the oldest up to the allowance', () => {
    expect(endpointsToPause(active, 1)).toEqual(['b', 'c']);
    expect(endpointsToPause(active, 10)).toEqual([]);
  });

  it('keeps none on free or expired plans, all on unlimited ones', () => {
    expect(endpointsToPause(active, 0)).toEqual(['a', 'b', 'c']);
    expect(endpointsToPause(active, null)).toEqual([]);
  });
});
