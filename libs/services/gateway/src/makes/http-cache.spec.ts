import { entityTag, ifNoneMatchMatches } from './http-cache';

describe('ETag handling of the name lists', () => {
  const tag = entityTag('{"data":["Porsche"]}');

  it('makes a stable strong tag of the body', () => {
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(entityTag('{"data":["Porsche"]}')).toBe(tag);
    expect(entityTag('{"data":["BMW"]}')).not.toBe(tag);
  });

  it('matches If-None-Match weakly, in lists, and for *', () => {
    expect(ifNoneMatchMatches(tag, tag)).toBe(true);
    expect(ifNoneMatchMatches(`W/${tag}`, tag)).toBe(true);
    expect(ifNoneMatchMatches(`"a", ${tag} ,"b"`, tag)).toBe(true);
    expect(ifNoneMatchMatches('*', tag)).toBe(true);
    expect(ifNoneMatchMatches('"other"', tag)).toBe(false);
    expect(ifNoneMatchMatches(undefined, tag)).toBe(false);
    expect(ifNoneMatchMatches(['"x"', tag], tag)).toBe(true);
  });
});
