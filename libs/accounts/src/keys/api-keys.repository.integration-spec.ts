import { randomUUID } from 'node:crypto';
import { createDataSource, isUniqueViolation, pgPoolOf } from '@cars/persistence';
import { DataSource } from 'typeorm';
import { AccountsRepository } from '../accounts/accounts.repository';
import { generateApiKey } from './api-key';
import { ApiKeysRepository } from './api-keys.repository';

/**
 * The SQL of `api_keys`, called directly against the test run's migrated database, on accounts
 * and keys of each test's own.
 */
describe('ApiKeysRepository (PostgreSQL)', () => {
  let db: DataSource;
  let accountsRepository: AccountsRepository;
  let apiKeysRepository: ApiKeysRepository;

  beforeAll(async () => {
    db = await createDataSource({ url: process.env.DATABASE_URL!, poolSize: 4, applicationName: 'test' }).initialize();
    accountsRepository = new AccountsRepository(pgPoolOf(db));
    apiKeysRepository = new ApiKeysRepository(pgPoolOf(db));
  });

  afterAll(async () => {
    await db?.destroy();
  });

  const newAccount = async (plan: '1k' | 'free' = '1k') =>
    (await accountsRepository.insert({ email: `keys-${randomUUID()}@example.test`, plan, emailVerified: false, planExpiresAt: null }))!;
  const lastUsedAt = async (keyId: string): Promise<Date | null> =>
    ((await db.query(`SELECT last_used_at FROM api_keys WHERE id = $1`, [keyId])) as { last_used_at: Date | null }[])[0].last_used_at;

  it('stores a key as its prefix and hash only, and finds it by the hash', async () => {
    const account = await newAccount();
    const key = generateApiKey();
    const record = await apiKeysRepository.insert(account.id, key);
    expect(record).toEqual({ id: expect.any(String), accountId: account.id, prefix: key.prefix, createdAt: expect.any(Date), revokedAt: null });
    const stored: { prefix: string; key_hash: string }[] = await db.query(`SELECT prefix, key_hash FROM api_keys WHERE id = $1`, [record!.id]);
    expect(stored).toEqual([{ prefix: key.prefix, key_hash: key.keyHash }]);
    expect(stored[0].key_hash).not.toContain(key.apiKey);
    expect(await apiKeysRepository.findByHash(key.keyHash)).toEqual(record);
    expect(await apiKeysRepository.findByHash(generateApiKey().keyHash)).toBeNull();
  });

  it('refuses a second key with the same prefix or hash, and a key of no account', async () => {
    const account = await newAccount();
    const key = generateApiKey();
    await apiKeysRepository.insert(account.id, key);
    const samePrefix = await apiKeysRepository.insert(account.id, { ...generateApiKey(), prefix: key.prefix }).catch((e: unknown) => e);
    expect(isUniqueViolation(samePrefix, 'api_keys_prefix_key')).toBe(true);
    const sameHash = await apiKeysRepository.insert(account.id, { ...generateApiKey(), keyHash: key.keyHash }).catch((e: unknown) => e);
    expect(isUniqueViolation(sameHash, 'api_keys_key_hash_key')).toBe(true);
    await expect(apiKeysRepository.insert(randomUUID(), generateApiKey())).rejects.toMatchObject({ code: '23503' });
  });

  it("gives the holder of an active key with the account's current plan and verification", async () => {
    const account = await newAccount('1k');
    const key = generateApiKey();
    const record = (await apiKeysRepository.insert(account.id, key))!;
    expect(await apiKeysRepository.findActiveHolder(key.keyHash)).toEqual({
      keyId: record.id,
      accountId: account.id,
      plan: '1k',
      planExpiresAt: null,
      emailVerified: false,
    });
    const expires = new Date('2030-06-01T00:00:00Z');
    await accountsRepository.updatePlan(account.id, '100k', expires);
    await accountsRepository.markEmailVerified(account.id);
    expect(await apiKeysRepository.findActiveHolder(key.keyHash)).toMatchObject({ plan: '100k', planExpiresAt: expires, emailVerified: true });
    expect(await apiKeysRepository.findActiveHolder(generateApiKey().keyHash)).toBeNull();
  });

  it('revokes by prefix, keeping the first revocation time; a revoked key has no holder', async () => {
    const account = await newAccount();
    const [revoked, kept] = [generateApiKey(), generateApiKey()];
    await apiKeysRepository.insert(account.id, revoked);
    await apiKeysRepository.insert(account.id, kept);
    const first = await apiKeysRepository.revokeByPrefix(revoked.prefix);
    expect(first).toMatchObject({ accountId: account.id, prefix: revoked.prefix, revokedAt: expect.any(Date) });
    const second = await apiKeysRepository.revokeByPrefix(revoked.prefix);
    expect(second!.revokedAt).toEqual(first!.revokedAt);
    expect(await apiKeysRepository.findActiveHolder(revoked.keyHash)).toBeNull();
    expect(await apiKeysRepository.findByHash(revoked.keyHash)).toMatchObject({ revokedAt: first!.revokedAt });
    // The account's other key is untouched.
    expect(await apiKeysRepository.findActiveHolder(kept.keyHash)).toMatchObject({ accountId: account.id });
    expect(await apiKeysRepository.revokeByPrefix('cca_live_0000000')).toBeNull();
  });

  it('records the last use of a key, and of no other', async () => {
    const account = await newAccount();
    const used = (await apiKeysRepository.insert(account.id, generateApiKey()))!;
    const idle = (await apiKeysRepository.insert(account.id, generateApiKey()))!;
    expect(await lastUsedAt(used.id)).toBeNull();
    await apiKeysRepository.touchLastUsed(used.id);
    expect(await lastUsedAt(used.id)).toBeInstanceOf(Date);
    expect(await lastUsedAt(idle.id)).toBeNull();
    await db.query(`UPDATE api_keys SET last_used_at = '2000-01-01T00:00:00Z' WHERE id = $1`, [used.id]);
    await apiKeysRepository.touchLastUsed(used.id);
    expect((await lastUsedAt(used.id))!.getTime()).toBeGreaterThan(Date.parse('2000-01-01T00:00:00Z'));
    // An unknown key is no error.
    await expect(apiKeysRepository.touchLastUsed(randomUUID())).resolves.toBeUndefined();
  });
});
