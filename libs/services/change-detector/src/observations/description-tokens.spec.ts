import { KnownDescriptionTokens } from './description-tokens';

describe('KnownDescriptionTokens', () => {
  it('splits on single spaces like string_to_array(description, \' \'), without empty tokens', () => {
    const tokens = new KnownDescriptionTokens();
    expect(tokens.unknown(['Numbers-matching  engine, 100% documented. ', null, undefined, '', 'engine, again'])).toEqual([
      'Numbers-matching',
      'engine,',
      '100%',
      'documented.',
      'again',
    ]);
  });

  it('leaves out what was remembered after a commit, and only that', () => {
    const tokens = new KnownDescriptionTokens();
    const first = tokens.unknown(['red paint', 'Red Paint']);
    expect(first).toEqual(['red', 'paint', 'Red', 'Paint']);
    // Not committed yet: still unknown.
    expect(tokens.unknown(['red'])).toEqual(['red']);
    tokens.remember(first);
    expect(tokens.unknown(['red paint, new', 'Paint'])).toEqual(['paint,', 'new']);
  });

  it('starts over when full instead of growing without bound', () => {
    const tokens = new KnownDescriptionTokens(3);
    tokens.remember(['a', 'b']);
    expect(tokens.size).toBe(2);
    tokens.remember(['c', 'd']);
    expect(tokens.size).toBe(2);
    expect(tokens.unknown(['a c d'])).toEqual(['a']);
  });
});
