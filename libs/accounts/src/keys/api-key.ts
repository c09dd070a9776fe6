import { createHmac, hash, randomBytes } from 'node:crypto';

/**
 * API keys look like `cca_live_` + 32 base62 characters (~190 random bits). Only their SHA-256
 * hash is stored, with the first {@link API_KEY_PREFIX_LENGTH} characters as a prefix operators
 * can name a key by (`keys:revoke --key-prefix`). The prefix gives away 7 of the 32 random
 * characters, which leaves ~149 bits unknown — still far beyond guessing.
 */
export const API_KEY_PREFIX = 'cca_live_';
export const API_KEY_RANDOM_LENGTH = 32;
/** `cca_live_` + 7 characters: long enough that prefixes never collide in practice (62^7). */
export const API_KEY_PREFIX_LENGTH = API_KEY_PREFIX.length + 7;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${API_KEY_RANDOM_LENGTH}}$`);

export interface NewApiKey {
  /** The key itself: shown once, never stored. */
  apiKey: string;
  prefix: string;
  keyHash: string;
}

/** `length` base62 digits of 32 bytes of entropy (bias below 2^-60). */
function base62(bytes: Buffer, length: number): string {
  let value = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  for (let i = 0; i < length; i += 1) {
    out += BASE62[Number(value % 62n)];
    value /= 62n;
  }
  return out;
}

function fromRandom(random: Buffer): NewApiKey {
  const apiKey = `${API_KEY_PREFIX}${base62(random, API_KEY_RANDOM_LENGTH)}`;
  return { apiKey, prefix: apiKeyPrefix(apiKey), keyHash: hashApiKey(apiKey) };
}

export function generateApiKey(): NewApiKey {
  return fromRandom(randomBytes(32));
}

/** A key derived from a secret and a label: the same inputs always give the same key (demo accounts). */
export function deriveApiKey(secret: Buffer, label: string): NewApiKey {
  return fromRandom(createHmac('sha256', secret).update(label).digest());
}

/** SHA-256 of the key, hex: what the database stores and looks up (one-shot: no Hash object per request). */
export function hashApiKey(apiKey: string): string {
  return hash('sha256', apiKey, 'hex');
}

export function apiKeyPrefix(apiKey: string): string {
  return apiKey.slice(0, API_KEY_PREFIX_LENGTH);
}

/** Shape check before any lookup: a string that cannot be a key is rejected without a query. */
export function isWellFormedApiKey(value: string): boolean {
  return KEY_PATTERN.test(value);
}
