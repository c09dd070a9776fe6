import { validatePlain } from '../validation';
import { LiveAuctionsQueryDto, SearchAuctionsQueryDto } from './auctions.dto';
import { KEYWORD_TOO_SHORT, parseDateTimeParam } from './auctions.validators';
import { AuctionIdParamDto, isAuctionId, ListBidsRequestDto } from './bids.dto';

describe('query parameter rules', () => {
  it('parses RFC 3339 date-times with an offset, and dates', () => {
    expect(parseDateTimeParam('2026-01-31T18:00:00Z')?.toISOString()).toBe('2026-01-31T18:00:00.000Z');
    expect(parseDateTimeParam('2026-01-31T18:00:00.123456+02:00')?.toISOString()).toBe('2026-01-31T16:00:00.123Z');
    expect(parseDateTimeParam('2026-01-31T18:00Z')?.toISOString()).toBe('2026-01-31T18:00:00.000Z');
    expect(parseDateTimeParam('2024-02-29')?.toISOString()).toBe('2024-02-29T00:00:00.000Z');
    for (const bad of [
      '2026-01-31T18:00:00',
      '2025-02-29',
      '2026-13-01',
      '2026-01-31T24:00:00Z',
      '2026-01-31T18:60:00Z',
      '2026-01-31T18:00:00+25:00',
      '2026-1-31',
      '1700000000',
      'tomorrow',
      '',
    ]) {
      expect({ bad, parsed: parseDateTimeParam(bad) }).toEqual({ bad, parsed: null });
    }
  });

  it('takes a keyword only with a space-separated part of 3+ characters (what an index can look up), on both routes', () => {
    for (const dto of [SearchAuctionsQueryDto, LiveAuctionsQueryDto] as (new () => object)[]) {
      for (const keyword of ['M3 coupe', ' 911 ', 'a bcd', 'gto', '50%', 'Ære']) {
        expect({ keyword, ok: validatePlain(dto, { keyword }).ok }).toEqual({ keyword, ok: true });
      }
      for (const keyword of ['M3', 'a b', ' x ', 'gt 4', 'ab cd ef', '🚗🚗']) {
        expect({ keyword, result: validatePlain(dto, { keyword }) }).toEqual({ keyword, result: { ok: false, details: { keyword: [KEYWORD_TOO_SHORT] } } });
      }
      // Other problems are reported once, by their own rule.
      expect(validatePlain(dto, { keyword: '  ' })).toEqual({ ok: false, details: { keyword: ['keyword must not be empty'] } });
    }
  });

  it('converts query-string integers and accepts already converted ones (the service re-validates)', () => {
    const fromQuery = validatePlain(SearchAuctionsQueryDto, { year_min: '1960', limit: '10', page: '2' });
    expect(fromQuery.ok && fromQuery.value).toMatchObject({ year_min: 1960, limit: 10, page: 2 });
    const converted = validatePlain(SearchAuctionsQueryDto, { year_min: 1960, limit: 10 });
    expect(converted.ok).toBe(true);
  });

  it('gives one message per bad parameter', () => {
    const result = validatePlain(SearchAuctionsQueryDto, {
      limit: '0',
      page: 'x',
      year_min: '2000',
      year_max: '1990',
      status: 'gone',
      model: '911',
      color: 'red',
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.details).toEqual({
      limit: ['limit must be an integer from 1 to 100'],
      page: ['page must be an integer from 1 to 2147483647'],
      year_min: ['year_min must not be greater than year_max'],
      status: ['status must be one of: sold, bid to, reserve not met, canceled, unknown, withdrawn'],
      model: ['model requires make (or vin or seller_username): model names are only unique within a make'],
      color: ['color is not a recognised parameter'],
    });
  });

  it('lets model go without make when vin or seller_username is given', () => {
    expect(validatePlain(SearchAuctionsQueryDto, { model: '911', vin: 'X' }).ok).toBe(true);
    expect(validatePlain(SearchAuctionsQueryDto, { model: '911', seller_username: 'x' }).ok).toBe(true);
    expect(validatePlain(LiveAuctionsQueryDto, { model: '911' }).ok).toBe(false);
  });

  it('ties cursor and page to the paging mode', () => {
    const cursor = 'eyJrIjpudWxsfQ.abcdefghijklmnopqrstuv';
    expect(validatePlain(SearchAuctionsQueryDto, { pagination: 'cursor', cursor }).ok).toBe(true);
    // A cursor alone means cursor mode; with page, or with pagination=page, it is a contradiction.
    expect(validatePlain(SearchAuctionsQueryDto, { cursor }).ok).toBe(true);
    expect(validatePlain(SearchAuctionsQueryDto, { cursor, page: '2' }).ok).toBe(false);
    expect(validatePlain(SearchAuctionsQueryDto, { pagination: 'page', cursor }).ok).toBe(false);
    expect(validatePlain(SearchAuctionsQueryDto, { pagination: 'cursor', page: '1' }).ok).toBe(false);
    expect(validatePlain(SearchAuctionsQueryDto, { pagination: 'page', page: '1' }).ok).toBe(true);
  });

  it('restores a "+" offset decoded as a space, and orders windows', () => {
    const ok = validatePlain(LiveAuctionsQueryDto, { ending_after: '2030-01-01T13:00:00 01:00' });
    expect(ok.ok && ok.value.ending_after).toBe('2030-01-01T13:00:00+01:00');
    const empty = validatePlain(LiveAuctionsQueryDto, { ending_after: '2030-01-02', ending_before: '2030-01-01' });
    expect(empty.ok).toBe(false);
    expect(validatePlain(LiveAuctionsQueryDto, { source: 'hemmings' }).ok).toBe(false);
    expect(validatePlain(LiveAuctionsQueryDto, { source: 'carsandbids' }).ok).toBe(true);
  });

  it('accepts auction ids from 1 to the bigint maximum', () => {
    expect(isAuctionId('1')).toBe(true);
    expect(isAuctionId('9223372036854775807')).toBe(true);
    for (const bad of ['0', '-1', '01', '1.0', '9223372036854775808', '99999999999999999999', 'abc', '']) {
      expect({ bad, ok: isAuctionId(bad) }).toEqual({ bad, ok: false });
    }
    expect(validatePlain(AuctionIdParamDto, { auction_id: '12' }).ok).toBe(true);
    expect(validatePlain(ListBidsRequestDto, { auction_id: 12 }).ok).toBe(false);
  });
});
