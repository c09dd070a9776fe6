import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

interface MasterKey {
  id: string;
  key: Buffer;
}

/** A new master key for WEBHOOK_SECRET_KEY: base64 of 32 random bytes. */
export function generateMasterKey(): string {
  return randomBytes(KEY_BYTES).toString('base64');
}

/** The id stored beside each ciphertext: the first 12 hex digits of the key's SHA-256. */
export function masterKeyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 12);
}

/**
 * Endpoint signing secrets at rest: AES-256-GCM under a master key, with the key's id stored beside
 * each ciphertext. WEBHOOK_SECRET_KEY holds a comma-separated list of base64 keys: the first
 * encrypts, every one decrypts — so an operator rotates by putting a new key first, re-encrypting
 * (`admin secrets:reencrypt`), then dropping the old one. Messages never contain a key.
 */
export class SecretCipher {
  private constructor(private readonly keys: readonly MasterKey[]) {}

  static fromEnv(value: string | undefined, name = 'WEBHOOK_SECRET_KEY'): SecretCipher {
    if (value === undefined || value.trim() === '') {
      throw new Error(`${name} is required: a comma-separated list of base64 keys of 32 bytes (the first encrypts)`);
    }
    const keys = value.split(',').map((entry, index) => {
      const trimmed = entry.trim();
      const key = /^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) ? Buffer.from(trimmed, 'base64') : Buffer.alloc(0);
      if (key.length !== KEY_BYTES) {
        throw new Error(`${name}: key ${index + 1} is not base64 of ${KEY_BYTES} bytes`);
      }
      return { id: masterKeyId(key), key };
    });
    return new SecretCipher(keys);
  }

  get currentKeyId(): string {
    return this.keys[0].id;
  }

  /** `ciphertext` = base64(iv | tag | data), under the first key. */
  encrypt(plain: string): { ciphertext: string; keyId: string } {
    const { id, key } = this.keys[0];
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return { ciphertext: Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64'), keyId: id };
  }

  /** Throws when the key id is unknown or the ciphertext was altered. */
  decrypt(ciphertext: string, keyId: string): string {
    const master = this.keys.find((k) => k.id === keyId);
    if (!master) throw new Error(`no configured master key has id ${keyId}`);
    const raw = Buffer.from(ciphertext, 'base64');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('the ciphertext is truncated');
    const decipher = createDecipheriv('aes-256-gcm', master.key, raw.subarray(0, IV_BYTES));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}
