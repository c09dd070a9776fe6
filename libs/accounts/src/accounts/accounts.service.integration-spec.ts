import { randomUUID } from 'node:crypto';
import { createDataSource, pgPoolOf } from '@cars/persistence';
import { DataSource } from 'typeorm';
import { inTransaction } from '../db';
import { AccountsConflictError, AccountsInputError, AccountsNotFoundError } from '../errors';
import { hashApiKey } from '../keys/api-key';
import { ApiKeysRepository } from '../keys/api-keys.repository';
import { getUsage } from '../ledger/usage-ledger';
import {
  createAccount,
  createApiKey,
  describeAccount,
  revokeApiKey,
  setPlan,
  setUsage,
  verifyEmail,
} from './accounts.service';

describe('accounts service (PostgreSQL)', () => {
  let db: DataSource;

  beforeAll(async () => {
    db = await createDataSource({ url: process.env.DATABASE_URL!, poolSize: 4, applicationName: 'test' }).initialize();
  });

  afterAll(async () => {
    await db?.destroy();
  });

  const email = () => `svc-${randomUUID()}@example.test`;

  it('creates an account with a key stored only as prefix + SHA-256 hash', async () => {
    const { account, key } = await createAccount(db, { email: email(), plan: '10k' });
    expect(account).toMatchObject({ plan: '10k', emailVerified: false, planExpiresAt: null });
    const rows: { prefix: string; key_hash: string }[] = await db.query(`SELECT prefix, key_hash FROM api_keys WHERE account_id = $1`, [
      account.id,
    ]);
    expect(rows).toEqual([{ prefix: key.apiKey.slice(0, 16), key_hash: hashApiKey(key.apiKey) }]);
  });

  it('rejects a duplicate email (case-insensitive), a bad email and an unknown plan', async () => {
    const address = email();
    await createAccount(db, { email: address, plan: 'free' });
    await expect(createAccount(db, { email: address.toUpperCase(), plan: 'free' })).rejects.toBeInstanceOf(AccountsConflictError);
    await expect(createAccount(db, { email: 'nope', plan: 'free' })).rejects.toBeInstanceOf(AccountsInputError);
    await expect(createAccount(db, { email: email(), plan: 'gold' as never })).rejects.toThrow(/plan must be one of/);
  });

  it('sets plans and expiry, verifies email, sets usage, and describes the account', async () => {
    const { account } = await createAccount(db, { email: email(), plan: 'free' });
    const expires = new Date('2030-01-01T00:00:00Z');
    expect(await setPlan(db, { accountId: account.id, plan: '1k', planExpiresAt: expires })).toMatchObject({
      plan: '1k',
      planExpiresAt: expires,
    });
    await expect(setPlan(db, { accountId: account.id, plan: 'free', planExpiresAt: expires })).rejects.toThrow(/does not expire/);
    expect(await verifyEmail(db, account.id)).toMatchObject({ emailVerified: true });
    expect(await setUsage(db, account.id, 42)).toMatchObject({ used: 42, reserved: 0 });
    expect(await getUsage(db, account.id)).toMatchObject({ used: 42 });
    const summary = await describeAccount(db, account.id, new Date('2031-01-01T00:00:00Z'));
    expect(summary.effectivePlan).toBe('free');
    expect(summary.usage.limit).toBe(100);
  });

  it("runs in the caller's pg transaction: a failed call leaves it usable, its rollback undoes every call", async () => {
    const address = email();
    const client = await pgPoolOf(db).connect();
    try {
      await client.query('BEGIN');
      const { account } = await createAccount(client, { email: address, plan: 'free' });
      await expect(createAccount(client, { email: address.toUpperCase(), plan: 'free' })).rejects.toBeInstanceOf(AccountsConflictError);
      // A statement that fails inside a nested transaction is undone to its savepoint only.
      await expect(inTransaction(client, (tx) => tx.query('SELECT 1 / 0'))).rejects.toMatchObject({ code: '22012' });
      expect(await setPlan(client, { accountId: account.id, plan: '1k' })).toMatchObject({ plan: '1k' });
      expect(await createApiKey(client, account.id)).toMatchObject({ accountId: account.id });
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    const rows: unknown[] = await db.query(`SELECT 1 FROM accounts WHERE lower(email) = lower($1)`, [address]);
    expect(rows).toEqual([]);
  });

  it('creates and revokes keys; unknown ids and prefixes are errors', async () => {
    const { account, key } = await createAccount(db, { email: email(), plan: '1k' });
    const second = await createApiKey(db, account.id);
    const revoked = await revokeApiKey(db, key.prefix);
    expect(revoked.revokedAt).toBeInstanceOf(Date);
    expect((await revokeApiKey(db, key.prefix)).revokedAt).toEqual(revoked.revokedAt);
    expect(await new ApiKeysRepository(pgPoolOf(db)).findActiveHolder(hashApiKey(key.apiKey))).toBeNull();
    expect(await new ApiKeysRepository(pgPoolOf(db)).findActiveHolder(hashApiKey(second.apiKey))).toMatchObject({ accountId: account.id });

    await expect(createApiKey(db, randomUUID())).rejects.toBeInstanceOf(AccountsNotFoundError);
    await expect(createApiKey(db, 'x')).rejects.toBeInstanceOf(AccountsInputError);
    await expect(revokeApiKey(db, 'cca_live_nothere')).rejects.toBeInstanceOf(AccountsNotFoundError);
    await expect(setPlan(db, { accountId: randomUUID(), plan: '1k' })).rejects.toBeInstanceOf(AccountsNotFoundError);
    await expect(verifyEmail(db, randomUUID())).rejects.toBeInstanceOf(AccountsNotFoundError);
    await expect(setUsage(db, randomUUID(), 1)).rejects.toBeInstanceOf(AccountsNotFoundError);
    await expect(setUsage(db, account.id, -1)).rejects.toBeInstanceOf(AccountsInputError);
  });
});
