import { endpointsToPause, paidFeatureRefusal } from './plan-change.rules';

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

describe('paid feature refusal', () => {
  const now = new Date('2026-11-25T12:00:00Z');
  it('names the requirement that is missing', () => {
    expect(paidFeatureRefusal('Creating webhooks', { plan: 'free', planExpiresAt: null, emailVerified: true }, { verifiedEmail: true, now }))
      .toBe('Creating webhooks requires an active paid plan (1K, 10K or 100K); this account is on the Free plan');
    expect(paidFeatureRefusal('Creating webhooks', { plan: '10k', planExpiresAt: null, emailVerified: false }, { verifiedEmail: true, now }))
      .toBe('Creating webhooks requires a verified email address on the account');
    expect(paidFeatureRefusal('Pricing statistics', { plan: '10k', planExpiresAt: null, emailVerified: false }, { verifiedEmail: false, now }))
      .toBeNull();
  });

  it('says when a paid plan lapsed', () => {
    const expired = new Date('2026-11-01T00:00:00Z');
    expect(paidFeatureRefusal('Sending test events', { plan: '1k', planExpiresAt: expired, emailVerified: true }, { verifiedEmail: true, now }))
      .toContain('the 1K plan of this account expired on 2026-11-01T00:00:00.000Z');
  });
});
