import { accountJson, AccountRecord } from '@cars/accounts';
import { accountOutput } from './accounts.commands';

const record: AccountRecord = {
  id: '0b6f6a3e-3f1c-4d8e-9a51-7c2d4e5f6a7b',
  email: 'you@example.com',
  emailVerified: false,
  plan: '1k',
  planExpiresAt: null,
  createdAt: new Date('2026-11-01T12:30:00.000Z'),
};

describe('the admin CLI’s account output', () => {
  it('is the API’s account projection with its id under the documented name account_id', () => {
    const { id, ...fields } = accountJson(record);
    expect(accountOutput(record)).toEqual({ account_id: id, ...fields });
  });

  it('prints account_id first, then the projection’s fields in its order', () => {
    expect(JSON.stringify(accountOutput(record))).toBe(
      '{"account_id":"0b6f6a3e-3f1c-4d8e-9a51-7c2d4e5f6a7b","email":"you@example.com","email_verified":false,' +
        '"plan":"1k","plan_expires_at":null,"created_at":"2026-11-01T12:30:00.000Z"}',
    );
  });
});
