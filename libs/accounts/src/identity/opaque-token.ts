import { createHash, randomBytes } from 'node:crypto';

/**
 * Session tokens and email verification tokens: 32 random bytes, base64url (43 characters). Only
 * the SHA-256 hash is stored, so a copy of the database opens no session and verifies no email.
 * (A fast hash is right here: the token has 256 bits of entropy, unlike a password.)
 */
export function newOpaqueToken(): { token: string; tokenHash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, tokenHash: hashOpaqueToken(token) };
}

export function hashOpaqueToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Shape check before any lookup: a string that cannot be a token is refused without a query. */
export function isWellFormedOpaqueToken(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value);
}
