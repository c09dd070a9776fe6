import { jsonNestingExceeds } from './json-depth';

describe('jsonNestingExceeds', () => {
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it('counts objects and arrays, up to the limit inclusive', () => {
    expect(jsonNestingExceeds(nested(32), 32)).toBe(false);
    expect(jsonNestingExceeds(nested(33), 32)).toBe(true);
    expect(jsonNestingExceeds('{"a":{"b":[{"c":1}]}}', 4)).toBe(false);
    expect(jsonNestingExceeds('{"a":{"b":[{"c":1}]}}', 3)).toBe(true);
    expect(jsonNestingExceeds('[[]],[[]],[[]]', 2)).toBe(false);
  });

  it('skips brackets inside strings, escaped quotes included', () => {
    expect(jsonNestingExceeds(`{"a":"${'['.repeat(100)}"}`, 2)).toBe(false);
    expect(jsonNestingExceeds(`{"a":"\\"${'{'.repeat(100)}\\\\"}`, 2)).toBe(false);
    expect(jsonNestingExceeds(`{"a\\"":[${'['.repeat(5)}]}`, 3)).toBe(true);
  });

  it('reads UTF-8 bytes like text, and 100,000 levels without recursion', () => {
    expect(jsonNestingExceeds(Buffer.from(`{"é✓":"[[[[","x":${nested(3)}}`), 4)).toBe(false);
    expect(jsonNestingExceeds(Buffer.from(`{"é✓":"[[[[","x":${nested(4)}}`), 4)).toBe(true);
    expect(jsonNestingExceeds(nested(100_000), 32)).toBe(true);
  });
});
