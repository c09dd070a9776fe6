import { booleanFlag, integerFlag, numberFlag, parseFlags, stringFlag, UsageError } from './args';

describe('benchmark command lines', () => {
  const options = { auctions: { type: 'string' }, seed: { type: 'string' }, rate: { type: 'string' }, keep: { type: 'boolean' } } as const;
  const parse = (...argv: string[]) => {
    const flags = parseFlags(argv, options);
    if (flags === 'help') throw new Error('unexpected help');
    return flags;
  };
  const usageError = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      return (error as Error).message;
    }
    throw new Error('no usage error');
  };

  it('reads string and boolean flags, with defaults for those not given', () => {
    const flags = parse('--auctions', '500', '--seed=abc', '--keep');
    expect(integerFlag(flags, 'auctions', 1, 1)).toBe(500);
    expect(stringFlag(flags, 'seed', '1')).toBe('abc');
    expect(booleanFlag(flags, 'keep')).toBe(true);
    expect(numberFlag(flags, 'rate', 100, 'positive')).toBe(100);
    const none = parse();
    expect([integerFlag(none, 'auctions', 7), stringFlag(none, 'seed', 's'), booleanFlag(none, 'keep')]).toEqual([7, 's', false]);
  });

  it('answers help for --help and -h', () => {
    expect(parseFlags(['--help'], options)).toBe('help');
    expect(parseFlags(['--auctions', '5', '-h'], options)).toBe('help');
  });

  it('refuses unknown flags, missing values, values of boolean flags and positional arguments', () => {
    expect(usageError(() => parse('--bogus'))).toMatch(/--bogus/);
    expect(usageError(() => parse('--seed'))).toMatch(/--seed/);
    expect(usageError(() => parse('--keep=yes'))).toMatch(/--keep/);
    expect(usageError(() => parse('500'))).toMatch(/500/);
    // A value that looks like a flag must be attached with `=`.
    expect(usageError(() => parse('--auctions', '-1'))).toBe("Option '--auctions' argument is ambiguous.");
  });

  it('refuses values that are not numbers in range', () => {
    for (const value of ['abc', '1.5', '0', '-1', '1e3', '']) {
      expect({ value, message: usageError(() => integerFlag(parse(`--auctions=${value}`), 'auctions', 1, 1)) }).toEqual({
        value,
        message: `--auctions must be an integer of at least 1 (got "${value}")`,
      });
    }
    expect(integerFlag(parse('--auctions', '0'), 'auctions', 1)).toBe(0);
    expect(numberFlag(parse('--rate', '0.5'), 'rate', 1, 'positive')).toBe(0.5);
    expect(numberFlag(parse('--rate', '0'), 'rate', 1)).toBe(0);
    expect(usageError(() => numberFlag(parse('--rate', '0'), 'rate', 1, 'positive'))).toBe('--rate must be a positive number (got "0")');
    expect(usageError(() => numberFlag(parse('--rate', 'Infinity'), 'rate', 1))).toMatch(/non-negative number/);
    expect(usageError(() => numberFlag(parse('--rate', ' '), 'rate', 1))).toMatch(/non-negative number/);
    expect(usageError(() => stringFlag(parse('--seed', ''), 'seed', '1'))).toBe('--seed must not be empty');
  });
});
