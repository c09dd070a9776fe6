import { optionsOf, parseFlags, UsageError } from './command';

describe('admin command flags', () => {
  const usage = 'accounts:set-plan --account ID --plan free|1k|10k|100k [--expires-at ISO] [--verified]';

  it('reads the options from the usage line', () => {
    expect(optionsOf(usage)).toEqual({
      account: { type: 'string' },
      plan: { type: 'string' },
      'expires-at': { type: 'string' },
      verified: { type: 'boolean' },
    });
  });

  it('parses values in both spellings, and booleans', () => {
    expect(parseFlags(usage, ['--account', 'a1', '--plan=10k', '--verified'])).toEqual({ account: 'a1', plan: '10k', verified: true });
  });

  it('refuses unknown flags, missing values and stray arguments as usage errors', () => {
    expect(() => parseFlags(usage, ['--acount', 'a1'])).toThrow(UsageError);
    expect(() => parseFlags(usage, ['--account'])).toThrow(UsageError);
    expect(() => parseFlags(usage, ['a1'])).toThrow(UsageError);
  });
});
