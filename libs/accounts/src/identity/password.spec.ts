import { hashPassword, needsRehash, verifyAgainstDummy, verifyPassword } from './password';
import { hashOpaqueToken, isWellFormedOpaqueToken, newOpaqueToken } from './opaque-token';

const CHEAP = { N: 2 ** 10, r: 8, p: 1 };

describe('password hashes (scrypt)', () => {
  it('stores parameters, salt and hash, and verifies only the right password', async () => {
    const stored = await hashPassword('correct horse battery staple', CHEAP);
    expect(stored).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{86}==$/);
    expect(await verifyPassword('correct horse battery staple', stored)).toBe(true);
    expect(await verifyPassword('correct horse battery stapler', stored)).toBe(false);
    expect(await hashPassword('correct horse battery staple', CHEAP)).not.toBe(stored);
  });

  it('refuses malformed hashes without throwing', async () => {
    for (const stored of ['', 'scrypt$1$2$3', 'bcrypt$x$y$z$a$b', 'scrypt$3000000$8$1$AAAA$AAAA', 'scrypt$1024$8$1$$']) {
      expect(await verifyPassword('anything long enough', stored)).toBe(false);
    }
  });

  it('asks for a rehash when the parameters are weaker than the current ones', async () => {
    const stored = await hashPassword('correct horse battery staple', CHEAP);
    expect(needsRehash(stored, CHEAP)).toBe(false);
    expect(needsRehash(stored, { N: 2 ** 15, r: 8, p: 1 })).toBe(true);
    expect(needsRehash('garbage')).toBe(true);
  });

  it('spends a verification on unknown accounts and answers false', async () => {
    expect(await verifyAgainstDummy('whatever password')).toBe(false);
  });
});

describe('opaque tokens', () => {
  it('are 43 base64url characters whose SHA-256 hash is what gets stored', () => {
    const { token, tokenHash } = newOpaqueToken();
    expect(isWellFormedOpaqueToken(token)).toBe(true);
    expect(tokenHash).toBe(hashOpaqueToken(token));
    expect(tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(isWellFormedOpaqueToken('short')).toBe(false);
    expect(isWellFormedOpaqueToken(undefined)).toBe(false);
  });
});
