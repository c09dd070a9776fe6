import { copyField, copyText } from './copy-rows';

describe('copy-rows', () => {
  it('writes COPY text fields: null, numbers, booleans, escaped text, arrays, JSON', () => {
    expect(copyField(null)).toBe('\\N');
    expect(copyField(undefined)).toBe('\\N');
    expect(copyField(42)).toBe('42');
    expect(copyField(true)).toBe('t');
    expect(copyField(false)).toBe('f');
    expect(copyField('plain')).toBe('plain');
    expect(copyField('a\tb\nc\\d\re')).toBe('a\\tb\\nc\\\\d\\re');
    expect(copyField(['x', 'say "hi"', 'back\\slash', null])).toBe('{"x","say \\\\"hi\\\\"","back\\\\\\\\slash",NULL}');
    expect(copyField([])).toBe('{}');
    expect(copyField({ a: 'q"\\' })).toBe('{"a":"q\\\\"\\\\\\\\"}');
  });

  it('keeps a NUL character as it is, for PostgreSQL to refuse', () => {
    expect(copyField('NUL \u0000 inside')).toBe('NUL \u0000 inside');
  });

  it('writes one line per row in the order of the columns', () => {
    const rows = [
      { a: 1, b: 'x', c: null },
      { a: 2, b: 'y\tz', c: true },
    ];
    expect(copyText(rows, ['b', 'a', 'c'])).toBe('x\t1\t\\N\ny\\tz\t2\tt\n');
  });
});
