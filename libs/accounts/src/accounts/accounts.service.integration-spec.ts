import { randomUUID } from 'node:crypto';
import { createDataSource, pgPoolOf, withTransaction } from '@cars/persistence';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
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
  let sql: Pool;

  beforeAll(async () => {
    db = await createDataSource({ url: process.env.DATABASE_URL!, poolSize: 4, applicationName: 'test' }).initialize();
    sql = pgPoolOf(db);
  });

  afterAll(async () => {
    await db?.destroy();
  });

  const email = () => `svc-${randomUUID()}@example.test`;

  it('creates an account with a key stored only as prefix + SHA-256 hash', async () => {
    const { account, key } = await createAccount(sql, { email: email(), plan: '10k' });
    expect(account).toMatchObject({ plan: '10k', emailVerified: false, planExpiresAt: null });
    const rows: { prefix: string; key_hash: string }[] = await db.query(`SELECT prefix, key_hash FROM api_keys WHERE account_id = $1`, [
      account.id,
    ]);
    expect(rows).toEqual([{ prefix: key.apiKey.slice(0, 16), key_hash: hashApiKey(key.apiKey) }]);
  });

  it('rejects a duplicate email (case-insensitive), a bad email and an unknown plan', async () => {
    const address = email();
    await createAccount(sql, { email: address, plan: 'free' });
    await expect(createAccount(sql, { email: address.toUpperCase(), plan: 'free' })).rejects.toBeInstanceOf(AccountsConflictError);
    await expect(createAccount(sql, { email: 'nope', plan: 'free' })).rejects.toBeInstanceOf(AccountsInputError);
    await expect(createAccount(sql, { email: email(), plan: 'gold' as never })).rejects.toThrow(/plan must be one of/);
  });

  it('sets plans and expiry, verifies email, sets usage, and describes the account', async () => {
    const { account } = await createAccount(sql, { email: email(), plan: 'free' });
    const expires = new Date('2030-01-01T00:00:00Z');
    expect(await setPlan(sql, { accountId: account.id, plan: '1k', planExpiresAt: expires })).toMatchObject({
      plan: '1k',
      planExpiresAt: expires,
    });
    await expect(setPlan(sql, { accountId: account.id, plan: 'free', planExpiresAt: expires })).rejects.toThrow(/does not expire/);
    expect(await verifyEmail(sql, account.id)).toMatchObject({ emailVerified: true });
    expect(await setUsage(sql, account.id, 42)).toMatchObject({ used: 42, reserved: 0 });
    expect(await getUsage(sql, account.id)).toMatchObject({ used: 42 });
    const summary = await describeAccount(sql, account.id, new Date('2031-01-01T00:00:00Z'));
    expect(summary.effectivePlan).toBe('free');
    expect(summary.usage.limit).toBe(100);
  });

  it("runs in the caller's pg transaction: a failed call leaves it usable, its rollback undoes every call", async () => {
    const address = email();
    const client = await sql.connect();
    try {
      await client.query('BEGIN');
      const { account } = await createAccount(client, { email: address, plan: 'free' });
      await expect(createAccount(client, { email: address.toUpperCase(), plan: 'free' })).rejects.toBeInstanceOf(AccountsConflictError);
      // A statement that fails inside a nested transaction is undone to its savepoint only.
      await expect(withTransaction(client, (tx) => tx.query('SELECT 1 / 0'))).rejects.toMatchObject({ code: '22012' });
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
    const { account, key } = await createAccount(sql, { email: email(), plan: '1k' });
    const second = await createApiKey(sql, account.id);
    const revoked = await revokeApiKey(sql, key.prefix);
    expect(revoked.revokedAt).toBeInstanceOf(Date);
    expect((await revokeApiKey(sql, key.prefix)).revokedAt).toEqual(revoked.revokedAt);
    expect(await new ApiKeysRepository(sql).findActiveHolder(hashApiKey(key.apiKey))).toBeNull();
    expect(await new ApiKeysRepository(sql).findActiveHolder(hashApiKey(second.apiKey))).toMatchObject({ accountId: account.id });

    await expect(createApiKey(sql, randomUUID())).rejects.toBeInstanceOf(AccountsNotFoundError);
    await expect(createApiKey(sql, 'x')).rejects.toBeInstanceOf(AccountsInputError);
    await expect(revokeApiKey(sql, 'cca_live_nothere')).rejects.toBeInstanceOf(AccountsNotFoundError);
    await expect(setPlan(sql, { accountId: randomUUID(), plan: '1k' })).rejects.toBeInstanceOf(AccountsNotFoundError);
    await expect(verifyEmail(sql, randomUUID())).rejects.toBeInstanceOf(AccountsNotFoundError);
    await expect(setUsage(sql, randomUUID(), 1)).rejects.toBeInstanceOf(AccountsNotFoundError);
    await expect(setUsage(sql, account.id, -1)).rejects.toBeInstanceOf(AccountsInputError);
  });
});
