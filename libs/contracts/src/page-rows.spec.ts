import { pageJsonOfRows, PageRows, pageRows } from './page-rows';

describe('PageRows', () => {
  const meta = { total: 2, page: 1, limit: 2, total_pages: 1, has_more: false, next_cursor: null };

  it('puts the field names back in order, item after item, and leaves nested objects and marks inside strings alone', () => {
    const rows = pageRows('id,note,stats', ['{"~":1,"~":"a \\"~\\": b","~":{"views" : 3}}', '{"~":2,"~":null,"~":{"views" : null}}'], meta);
    expect(pageJsonOfRows(rows.text)).toBe(
      `{"data":[{"id":1,"note":"a \\"~\\": b","stats":{"views" : 3}},{"id":2,"note":null,"stats":{"views" : null}}],"meta":${JSON.stringify(meta)}}`,
    );
  });

  it('writes an empty page as the JSON text does', () => {
    expect(pageJsonOfRows(pageRows('id', [], { ...meta, total: 0 }).text)).toBe(`{"data":[],"meta":${JSON.stringify({ ...meta, total: 0 })}}`);
  });

  it('is its JSON text inside any JSON envelope', () => {
    const rows = pageRows('id', ['{"~":7}'], meta);
    expect(JSON.parse(JSON.stringify({ ok: true, value: rows }))).toEqual({ ok: true, value: `{"data":[{"id":7}],"meta":${JSON.stringify(meta)}}` });
  });

  it('refuses a text whose items do not have the fields named', () => {
    expect(() => pageJsonOfRows(new PageRows('id,title\n{}\n{"~":1}').text)).toThrow('1 fields for items of 2');
    expect(() => pageJsonOfRows('id')).toThrow('without its field names and meta');
  });
});
