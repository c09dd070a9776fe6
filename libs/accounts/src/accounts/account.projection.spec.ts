import { accountJson } from './account.projection';
import type { AccountRecord } from './accounts.repository';

const record: AccountRecord = {
  id: '0b6f6a3e-3f1c-4d8e-9a51-7c2d4e5f6a7b',
  email: 'you@example.com',
  emailVerified: true,
  plan: '10k',
  planExpiresAt: new Date('2099-01-01T00:00:00Z'),
  createdAt: new Date('2026-11-01T12:30:00.250Z'),
};

describe('accountJson', () => {
  it('projects every field, snake_case, dates as ISO 8601', () => {
    expect(accountJson(record)).toEqual({
      id: '0b6f6a3e-3f1c-4d8e-9a51-7c2d4e5f6a7b',
      email: 'you@example.com',
      email_verified: true,
      plan: '10k',
      plan_expires_at: '2099-01-01T00:00:00.000Z',
      created_at: '2026-11-01T12:30:00.250Z',
    });
  });

  it('shows a plan that does not lapse as plan_expires_at null', () => {
    expect(accountJson({ ...record, plan: 'free', planExpiresAt: null }).plan_expires_at).toBeNull();
  });
});
