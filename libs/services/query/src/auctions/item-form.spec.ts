import { PAGE_ROWS_READER_REQUEST } from '@cars/contracts';
import { RmqContext } from '@nestjs/microservices';
import { ACCEPTS_JSON_TEXT_HEADER, JSON_TEXT_READER_REQUEST } from '@cars/messaging';
import { itemFormOf } from './item-form';

describe('itemFormOf', () => {
  const request = (properties: Record<string, unknown>) => new RmqContext([{ properties }, {}, 'query.auctions.search']);

  it('answers PageRows only to a client that reads them', () => {
    expect(itemFormOf(request({ type: PAGE_ROWS_READER_REQUEST }))).toBe('rows');
    expect(itemFormOf(request({ type: JSON_TEXT_READER_REQUEST }))).toBe('json');
    expect(itemFormOf(request({ headers: { [ACCEPTS_JSON_TEXT_HEADER]: true } }))).toBe('json');
    expect(itemFormOf(request({}))).toBe('json');
    expect(itemFormOf(undefined)).toBe('json');
  });
});
