import { randomBytes, scrypt, ScryptOptions, timingSafeEqual } from 'node:crypto';

/**
 * Passwords are hashed with scrypt (node:crypto, memory-hard; OpenSSL's implementation, never our
 * own). The stored string carries everything needed to verify it later, so the cost can be raised
 * without invalidating existing hashes:
 *
 *   scrypt$<N>$<r>$<p>$<salt, base64>$<hash, base64>
 *
 * Defaults: N = 2^15, r = 8, p = 1 (32 MiB, ~50-100 ms on this kind of machine), a 16-byte random
 * salt, a 64-byte derived key. Verification recomputes with the stored parameters and compares in
 * constant time.
 */
export interface PasswordHashParams {
  /** CPU/memory cost, a power of two. */
  N: number;
  r: number;
  p: number;
}

export const DEFAULT_PASSWORD_HASH_PARAMS: PasswordHashParams = { N: 2 ** 15, r: 8, p: 1 };

const SALT_BYTES = 16;
const KEY_BYTES = 64;
const PREFIX = 'scrypt';

/** Password length rules of sign-up and password change (characters, not bytes). */
export const PASSWORD_MIN_LENGTH = 10;
export const PASSWORD_MAX_LENGTH = 200;

function derive(password: string, salt: Buffer, params: PasswordHashParams, keyLength: number): Promise<Buffer> {
  const options: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r + 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

export async function hashPassword(password: string, params: PasswordHashParams = DEFAULT_PASSWORD_HASH_PARAMS): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, params, KEY_BYTES);
  return [PREFIX, params.N, params.r, params.p, salt.toString('base64'), key.toString('base64')].join('$');
}

function parse(stored: string): { params: PasswordHashParams; salt: Buffer; key: Buffer } | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== PREFIX) return null;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  if (![N, r, p].every((n) => Number.isInteger(n) && n > 0) || N > 2 ** 20 || r > 32 || p > 16) return null;
  const salt = Buffer.from(parts[4], 'base64');
  const key = Buffer.from(parts[5], 'base64');
  if (salt.length === 0 || key.length === 0) return null;
  return { params: { N, r, p }, salt, key };
}

/** True when `password` matches the stored hash; false for anything else, a malformed hash included. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored);
  if (!parsed) return false;
  const key = await derive(password, parsed.salt, parsed.params, parsed.key.length);
  return timingSafeEqual(key, parsed.key);
}

/** True when the stored hash was made with weaker parameters than `params` (rehash on the next sign-in). */
export function needsRehash(stored: string, params: PasswordHashParams = DEFAULT_PASSWORD_HASH_PARAMS): boolean {
  const parsed = parse(stored);
  return !parsed || parsed.params.N < params.N || parsed.params.r < params.r || parsed.params.p < params.p;
}

const dummyHashes = new Map<string, Promise<string>>();

/**
 * Spends the time of one verification without an account: sign-in with an unknown email takes as
 * long as with a wrong password (the dummy hash has the cost of new hashes, `params`), so the
 * timing does not tell which emails have accounts.
 */
export async function verifyAgainstDummy(password: string, params: PasswordHashParams = DEFAULT_PASSWORD_HASH_PARAMS): Promise<false> {
  const name = `${params.N}/${params.r}/${params.p}`;
  let dummy = dummyHashes.get(name);
  if (!dummy) {
    dummy = hashPassword(randomBytes(16).toString('hex'), params);
    dummyHashes.set(name, dummy);
  }
  await verifyPassword(password, await dummy);
  return false;
}
