import { UsageError, parseArgs } from './args';
import { DEFAULT_AUCTIONS, DEFAULT_LIVE, currentUtcDate } from '@cars/datagen';

describe('datagen arguments', () => {
  it('reads every option in both spellings, with defaults', () => {
    expect(parseArgs(['--auctions', '1000', '--seed', 'abc', '--out', 'x.ndjson', '--today=2024-05-03', '--live=7', '--quiet'])).toEqual({
      auctions: 1000,
      live: 7,
      seed: 'abc',
      today: '2024-05-03',
      out: 'x.ndjson',
      quiet: true,
    });
    expect(parseArgs(['--out', 'y.ndjson'])).toEqual({ auctions: DEFAULT_AUCTIONS, live: DEFAULT_LIVE, seed: '1', today: currentUtcDate(), out: 'y.ndjson', quiet: false });
    expect(parseArgs(['--out', 'z.ndjson', '--seed', '7', '--namespace', 'second_set'])).toMatchObject({ seed: '7', namespace: 'second_set' });
    expect(parseArgs(['--help'])).toBe('help');
  });

  it.each([
    [[], /--out FILE is required/],
    [['--out', 'x', '--auctions', 'ten'], /--auctions must be a non-negative integer/],
    [['--out', 'x', '--auctions', '-5'], /--auctions needs a value|non-negative integer/],
    [['--out', 'x', '--live', '1.5'], /--live must be a non-negative integer/],
    [['--out', 'x', '--today', '2024-13-01'], /--today must be a date/],
    [['--out', 'x', '--today', '2017-06-01'], /--today must be 2018-03-01 or later/],
    [['--out', 'x', '--colour', 'red'], /unknown option --colour/],
    [['--out', 'x', 'extra'], /unexpected argument "extra"/],
    [['--out', 'x', '--seed'], /--seed needs a value/],
    [['--out', 'x', '--out', 'y'], /--out given twice/],
    [['--out', 'x', '--namespace', 'two words'], /--namespace must be 1-32 letters/],
  ])('rejects %j', (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(UsageError);
    expect(() => parseArgs(argv)).toThrow(message);
  });
});
