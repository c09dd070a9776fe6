import {
  AuctionIdParamDto,
  ListBidsQueryDto,
  SearchAuctionsQueryDto,
  StatsQueryDto,
  validatePlain,
} from '@cars/contracts';
import { parseToolInput, toolInputSchema, ToolInput } from './tool-input';

const SEARCH: ToolInput[] = [{ dto: SearchAuctionsQueryDto, in: 'query' }];
const BIDS: ToolInput[] = [
  { dto: AuctionIdParamDto, in: 'path' },
  { dto: ListBidsQueryDto, in: 'query' },
];

describe('toolInputSchema', () => {
  it("states each DTO parameter's type, limits, enum, default and example, and nothing else", () => {
    const schema = toolInputSchema(SEARCH);
    expect(schema).toMatchObject({ type: 'object', additionalProperties: false });
    expect(schema.required).toBeUndefined();
    expect(Object.keys(schema.properties)).toEqual([
      'make', 'model', 'vin', 'seller_username', 'year_min', 'year_max', 'price_min', 'price_max', 'keyword',
      'page', 'limit', 'pagination', 'cursor', 'status', 'source', 'sort', 'direction',
    ]);
    expect(schema.properties.limit).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 50, description: 'Items per page.' });
    expect(schema.properties.make).toMatchObject({ type: 'string', minLength: 1, maxLength: 100, examples: ['Porsche'] });
    expect(schema.properties.price_max).toMatchObject({ type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
    expect(schema.properties.direction).toEqual({ type: 'string', enum: ['asc', 'desc'], default: 'desc' });
  });

  it('marks required parameters, path ones included', () => {
    expect(toolInputSchema([{ dto: StatsQueryDto, in: 'query' }]).required).toEqual(['make']);
    const bids = toolInputSchema(BIDS);
    expect(bids.required).toEqual(['auction_id']);
    expect(bids.properties.auction_id).toMatchObject({ type: 'integer', minimum: 1 });
    expect(bids.properties.limit).toMatchObject({ maximum: 100, default: 100 });
  });

  it('refuses two inputs declaring the same parameter', () => {
    expect(() => toolInputSchema([...SEARCH, ...SEARCH])).toThrow(/already in the tool's input/);
  });
});

describe('parseToolInput', () => {
  it('gives the DTO instances the REST ValidationPipe gives, from JSON arguments or query-string text', () => {
    const fromJson = parseToolInput(SEARCH, { make: 'Porsche', year_min: 1965, limit: 10, keyword: '  gto ' });
    const fromText = parseToolInput(SEARCH, { make: 'Porsche', year_min: '1965', limit: '10', keyword: '  gto ' });
    expect(fromJson).toEqual({ ok: true, values: [expect.any(SearchAuctionsQueryDto)] });
    expect(fromJson).toEqual(fromText);
    expect(fromJson.ok && { ...fromJson.values[0] }).toEqual({ make: 'Porsche', year_min: 1965, limit: 10, keyword: 'gto' });
  });

  it('answers the REST details for bad arguments, naming unknown ones', () => {
    const args = { limit: 1000, colour: 'red', model: '911' };
    const expected = validatePlain(SearchAuctionsQueryDto, args);
    expect(expected.ok).toBe(false);
    expect(parseToolInput(SEARCH, args)).toEqual(expected);
    expect(parseToolInput(SEARCH, args)).toEqual({
      ok: false,
      details: expect.objectContaining({
        limit: ['limit must be an integer from 1 to 100'],
        colour: ['colour is not a recognised parameter'],
      }),
    });
  });

  it('takes null as "not given"', () => {
    expect(parseToolInput(SEARCH, { make: 'Porsche', model: null, limit: null })).toEqual({
      ok: true,
      values: [expect.objectContaining({ make: 'Porsche' })],
    });
    expect(parseToolInput([{ dto: StatsQueryDto, in: 'query' }], { make: null })).toEqual({
      ok: false,
      details: { make: ['make is required: an exact make name from GET /makes'] },
    });
  });

  it('splits arguments between path and query inputs; a number is a path parameter in its text form', () => {
    const parsed = parseToolInput(BIDS, { auction_id: 42, sort: 'amount' });
    expect(parsed.ok && parsed.values.map((value) => ({ ...value }))).toEqual([{ auction_id: '42' }, { sort: 'amount' }]);
    expect(parseToolInput(BIDS, { auction_id: 'abc' })).toEqual({
      ok: false,
      details: { auction_id: ['auction_id must be an integer from 1 to 9223372036854775807'] },
    });
  });

  it('reports the query before the path, unknown arguments on the query, and a missing path parameter', () => {
    expect(parseToolInput(BIDS, { auction_id: 0, limit: 0, colour: 'red' })).toEqual({
      ok: false,
      details: { limit: ['limit must be an integer from 1 to 100'], colour: ['colour is not a recognised parameter'] },
    });
    expect(parseToolInput(BIDS, { auction_id: 0 })).toEqual({
      ok: false,
      details: { auction_id: ['auction_id must be an integer from 1 to 9223372036854775807'] },
    });
    expect(parseToolInput(BIDS, { limit: 5 })).toEqual({ ok: false, details: { auction_id: ['auction_id is required'] } });
  });

  it('refuses any argument of a tool without parameters', () => {
    expect(parseToolInput([], {})).toEqual({ ok: true, values: [] });
    expect(parseToolInput([], undefined)).toEqual({ ok: true, values: [] });
    expect(parseToolInput([], { colour: 'red' })).toEqual({ ok: false, details: { colour: ['colour is not a recognised parameter'] } });
  });
});
