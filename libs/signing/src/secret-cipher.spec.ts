import { generateMasterKey, masterKeyId, SecretCipher } from './secret-cipher';
import { generateSigningSecret } from './webhook-signature';

describe('SecretCipher (signing secrets at rest)', () => {
  const keyA = generateMasterKey();
  const keyB = generateMasterKey();

  it('round-trips a secret; the ciphertext shows nothing of it and differs each time', () => {
    const cipher = SecretCipher.fromEnv(keyA);
    const secret = generateSigningSecret();
    const first = cipher.encrypt(secret);
    const second = cipher.encrypt(secret);
    expect(first.keyId).toBe(masterKeyId(Buffer.from(keyA, 'base64')));
    expect(first.ciphertext).not.toContain(secret.slice(6, 20));
    expect(first.ciphertext).not.toBe(second.ciphertext);
    expect(cipher.decrypt(first.ciphertext, first.keyId)).toBe(secret);
  });

  it('rotates master keys: the first encrypts, every listed key decrypts', () => {
    const old = SecretCipher.fromEnv(keyA).encrypt('whsec_old');
    const rotated = SecretCipher.fromEnv(`${keyB}, ${keyA}`);
    expect(rotated.currentKeyId).not.toBe(old.keyId);
    expect(rotated.decrypt(old.ciphertext, old.keyId)).toBe('whsec_old');
    const fresh = rotated.encrypt('whsec_new');
    expect(fresh.keyId).toBe(rotated.currentKeyId);
    expect(() => SecretCipher.fromEnv(keyA).decrypt(fresh.ciphertext, fresh.keyId)).toThrow(/no configured master key/);
  });

  it('detects a tampered ciphertext', () => {
    const cipher = SecretCipher.fromEnv(keyA);
    const { ciphertext, keyId } = cipher.encrypt('whsec_x');
    const raw = Buffer.from(ciphertext, 'base64');
    raw[raw.length - 1] ^= 1;
    expect(() => cipher.decrypt(raw.toString('base64'), keyId)).toThrow();
    expect(() => cipher.decrypt('AAAA', keyId)).toThrow(/truncated/);
  });

  it('refuses a missing or malformed key with a message that never echoes it', () => {
    expect(() => SecretCipher.fromEnv(undefined)).toThrow(/WEBHOOK_SECRET_KEY is required/);
    expect(() => SecretCipher.fromEnv('  ')).toThrow(/WEBHOOK_SECRET_KEY is required/);
    const short = Buffer.alloc(16, 7).toString('base64');
    expect(() => SecretCipher.fromEnv(short)).toThrow('WEBHOOK_SECRET_KEY: key 1 is not base64 of 32 bytes');
    try {
      SecretCipher.fromEnv(`${keyA},not-a-key!`);
    } catch (error) {
      expect(String(error)).not.toContain(keyA);
      expect(String(error)).toContain('key 2');
    }
    expect.assertions(5);
  });
});
