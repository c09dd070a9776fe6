import { copyLine, copyValue } from './copy-text';

describe('COPY text encoding', () => {
  it('escapes separators and marks nulls', () => {
    expect(copyValue(null)).toBe('\\N');
    expect(copyValue('a\tb\nc\\d')).toBe('a\\tb\\nc\\\\d');
    expect(copyValue(true)).toBe('t');
    expect(copyLine([1, 'x', null])).toBe('1\tx\t\\N\n');
  });

  it('writes arrays as array literals', () => {
    expect(copyValue(['a', 'b "c"', 'd\\e'])).toBe('{"a","b \\\\"c\\\\"","d\\\\\\\\e"}');
  });
});
