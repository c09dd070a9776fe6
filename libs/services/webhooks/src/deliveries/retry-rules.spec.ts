import { DELIVERY_STATUSES } from '@cars/contracts';
import { retryDecision } from './retry-rules';

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
