import { createHash } from 'node:crypto';
import { apiKeyPrefix, deriveApiKey, generateApiKey, hashApiKey, isWellFormedApiKey } from './api-key';

describe('API keys', () => {
  it('generates well-formed, distinct keys with their prefix and SHA-256 hash', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 500; i += 1) {
      const key = generateApiKey();
      expect(key.apiKey).toMatch(/^cca_live_[0-9A-Za-z]{32}$/);
      expect(isWellFormedApiKey(key.apiKey)).toBe(true);
      expect(key.prefix).toBe(key.apiKey.slice(0, 16));
      expect(key.keyHash).toBe(createHash('sha256').update(key.apiKey).digest('hex'));
      seen.add(key.apiKey);
    }
    expect(seen.size).toBe(500);
  });

  it('uses the whole base62 alphabet', () => {
    const chars = new Set(Array.from({ length: 200 }, () => generateApiKey().apiKey.slice(9)).join(''));
    expect(chars.size).toBe(62);
  });

  it('derives the same key from the same secret and label, another for another label', () => {
    const secret = Buffer.alloc(32, 7);
    expect(deriveApiKey(secret, 'demo:1k:0').apiKey).toBe(deriveApiKey(secret, 'demo:1k:0').apiKey);
    expect(deriveApiKey(secret, 'demo:1k:0').apiKey).not.toBe(deriveApiKey(secret, 'demo:1k:1').apiKey);
    expect(deriveApiKey(Buffer.alloc(32, 8), 'demo:1k:0').apiKey).not.toBe(deriveApiKey(secret, 'demo:1k:0').apiKey);
    expect(isWellFormedApiKey(deriveApiKey(secret, 'x').apiKey)).toBe(true);
  });

  it('rejects strings that cannot be keys', () => {
    for (const value of ['', 'cca_live_', 'cca_live_short', `cca_test_${'a'.repeat(32)}`, `cca_live_${'a'.repeat(31)}!`, `cca_live_${'a'.repeat(33)}`]) {
      expect(isWellFormedApiKey(value)).toBe(false);
    }
  });

  it('hashes and prefixes consistently', () => {
    expect(hashApiKey('abc')).toHaveLength(64);
    expect(apiKeyPrefix('cca_live_ABCDEFGHIJ')).toBe('cca_live_ABCDEFG');
  });
});
