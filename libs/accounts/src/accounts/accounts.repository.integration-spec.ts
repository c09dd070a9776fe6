import { randomUUID } from 'node:crypto';
import { createDataSource, pgPoolOf, withTransaction } from '@cars/persistence';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { AccountsRepository } from './accounts.repository';

/**
 * The SQL of `accounts`, called directly against the test run's migrated database. Every test
 * works on accounts of its own (random emails), so it shares the database with other specs safely.
 */
describe('AccountsRepository (PostgreSQL)', () => {
  let db: DataSource;
  let sql: Pool;
  let accountsRepository: AccountsRepository;

  beforeAll(async () => {
    db = await createDataSource({ url: process.env.DATABASE_URL!, poolSize: 4, applicationName: 'test' }).initialize();
    sql = pgPoolOf(db);
    accountsRepository = new AccountsRepository(sql);
  });

  afterAll(async () => {
    await db?.destroy();
  });

  const email = () => `repo-${randomUUID()}@example.test`;
  const updatedAt = async (id: string): Promise<Date> =>
    ((await db.query(`SELECT updated_at FROM accounts WHERE id = $1`, [id])) as { updated_at: Date }[])[0].updated_at;

  it('inserts an account and reads it back by id', async () => {
    const address = email();
    const expires = new Date('2031-02-03T04:05:06.789Z');
    const account = await accountsRepository.insert({ email: address, plan: '10k', emailVerified: true, planExpiresAt: expires });
    expect(account).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email: address,
      emailVerified: true,
      plan: '10k',
      planExpiresAt: expires,
      createdAt: expect.any(Date),
    });
    expect(await accountsRepository.find(account!.id)).toEqual(account);
    expect(await accountsRepository.find(randomUUID())).toBeNull();
  });

  it('answers null for an email that exists already, whatever its letter case, and keeps the first account', async () => {
    const address = email();
    const first = await accountsRepository.insert({ email: address, plan: 'free', emailVerified: false, planExpiresAt: null });
    expect(await accountsRepository.insert({ email: address.toUpperCase(), plan: '1k', emailVerified: true, planExpiresAt: null })).toBeNull();
    const rows: { plan: string }[] = await db.query(`SELECT plan FROM accounts WHERE lower(email) = lower($1)`, [address]);
    expect(rows).toEqual([{ plan: 'free' }]);
    expect(await accountsRepository.find(first!.id)).toEqual(first);
  });

  it('refuses a plan the table does not know', async () => {
    await expect(
      accountsRepository.insert({ email: email(), plan: 'gold' as never, emailVerified: false, planExpiresAt: null }),
    ).rejects.toMatchObject({ code: '23514', constraint: 'accounts_plan_check' });
  });

  it('ensures an account: inserts it once, then returns the existing one unchanged', async () => {
    const address = email();
    const created = await accountsRepository.ensure({ email: address, plan: '1k', emailVerified: true });
    expect(created).toMatchObject({ email: address, plan: '1k', emailVerified: true, planExpiresAt: null });
    const again = await accountsRepository.ensure({ email: address.toUpperCase(), plan: 'free', emailVerified: false });
    expect(again).toEqual(created);
  });

  it('changes the plan and its expiry, and moves updated_at', async () => {
    const account = (await accountsRepository.insert({ email: email(), plan: 'free', emailVerified: false, planExpiresAt: null }))!;
    await db.query(`UPDATE accounts SET updated_at = '2000-01-01T00:00:00Z' WHERE id = $1`, [account.id]);
    const expires = new Date('2030-01-01T00:00:00Z');
    expect(await accountsRepository.updatePlan(account.id, '100k', expires)).toEqual({ ...account, plan: '100k', planExpiresAt: expires });
    expect((await updatedAt(account.id)).getTime()).toBeGreaterThan(Date.parse('2000-01-01T00:00:00Z'));
    expect(await accountsRepository.updatePlan(account.id, 'free', null)).toMatchObject({ plan: 'free', planExpiresAt: null });
    expect(await accountsRepository.updatePlan(randomUUID(), '1k', null)).toBeNull();
  });

  it('marks the email verified', async () => {
    const account = (await accountsRepository.insert({ email: email(), plan: 'free', emailVerified: false, planExpiresAt: null }))!;
    expect(await accountsRepository.markEmailVerified(account.id)).toEqual({ ...account, emailVerified: true });
    expect(await accountsRepository.find(account.id)).toMatchObject({ emailVerified: true });
    expect(await accountsRepository.markEmailVerified(randomUUID())).toBeNull();
  });

  it("runs in the caller's transaction: a rollback undoes its writes", async () => {
    const address = email();
    await expect(
      withTransaction(sql, async (tx) => {
        const account = await new AccountsRepository(tx).insert({ email: address, plan: '1k', emailVerified: false, planExpiresAt: null });
        expect(await new AccountsRepository(tx).find(account!.id)).toMatchObject({ email: address });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const rows: unknown[] = await db.query(`SELECT 1 FROM accounts WHERE email = $1`, [address]);
    expect(rows).toEqual([]);
  });

  it('locks the row for the rest of the transaction when asked to', async () => {
    const account = (await accountsRepository.insert({ email: email(), plan: 'free', emailVerified: false, planExpiresAt: null }))!;
    const tryLock = () => db.query(`SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE NOWAIT`, [account.id]);
    await withTransaction(sql, async (tx) => {
      expect(await new AccountsRepository(tx).find(account.id, { lock: true })).toEqual(account);
      // Another connection cannot take the lock while this transaction holds it.
      await expect(tryLock()).rejects.toMatchObject({ code: '55P03' });
    });
    await withTransaction(sql, async (tx) => {
      expect(await new AccountsRepository(tx).find(account.id)).toEqual(account);
      // Without the option the read takes no lock.
      await expect(tryLock()).resolves.toEqual([{ '?column?': 1 }]);
    });
  });
});
