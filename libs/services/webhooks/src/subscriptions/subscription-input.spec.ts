import { changesActivation, parseCreateInput, parsePatchInput, SubscriptionInput } from './subscription-input';

const valid = { url: 'https://example.com/hooks', event_types: ['auction.created', 'bid.created'] };

describe('POST /webhooks body', () => {
  it('fills the defaults', () => {
    expect(parseCreateInput(valid)).toEqual({ ok: true, value: { ...valid, description: '', filters: {} } });
  });

  it('keeps description and filters as given', () => {
    const body = { ...valid, description: 'prod', filters: { auction_id: '48213', make: 'porsche', source: 'BringATrailer' } };
    expect(parseCreateInput(body)).toEqual({ ok: true, value: body });
  });

  it.each([
    ['a non-object body', [], { body: ['the body must be a JSON object'] }],
    ['a string body', 'url', { body: ['the body must be a JSON object'] }],
    ['missing members', {}, { url: ['url is required'], event_types: ['event_types is required: at least one event type'] }],
    ['an unknown member', { ...valid, colour: 'red' }, { colour: ['colour is not a recognised field'] }],
    ['empty event_types', { ...valid, event_types: [] }, { event_types: ['event_types must not be empty'] }],
    ['event_types not an array', { ...valid, event_types: 'auction.created' }, { event_types: ['event_types must be an array of event type names'] }],
    ['a duplicate event type', { ...valid, event_types: ['bid.created', 'bid.created'] }, { event_types: ['"bid.created" is listed twice'] }],
    ['an unsupported event type', { ...valid, event_types: ['auction.deleted'] }, { event_types: [expect.stringContaining('unsupported event type "auction.deleted"')] }],
    ['webhook.test', { ...valid, event_types: ['webhook.test'] }, { event_types: [expect.stringContaining('webhook.test cannot be subscribed to')] }],
    ['a malformed URL', { ...valid, url: 'not a url' }, { url: [expect.stringContaining('absolute URL')] }],
    ['a URL of the wrong type', { ...valid, url: 42 }, { url: ['url must be a string'] }],
    ['a description of the wrong type', { ...valid, description: 7 }, { description: ['description must be a string'] }],
    ['filters not an object', { ...valid, filters: ['make'] }, { filters: ['filters must be an object (or {} for none)'] }],
    ['an unknown filter', { ...valid, filters: { model: '911' } }, { 'filters.model': ['filters.model is not a recognised field'] }],
    ['auction_id as a number', { ...valid, filters: { auction_id: 42 } }, { 'filters.auction_id': [expect.stringContaining('positive integer')] }],
    ['auction_id zero', { ...valid, filters: { auction_id: '0' } }, { 'filters.auction_id': [expect.stringContaining('positive integer')] }],
    ['an empty make', { ...valid, filters: { make: '  ' } }, { 'filters.make': [expect.stringContaining('non-empty')] }],
    ['an unknown source', { ...valid, filters: { source: 'ebay' } }, { 'filters.source': [expect.stringContaining('must be one of')] }],
    ['a NUL in the URL', { ...valid, url: 'https://example.com/a\u0000b' }, { url: ['url must not contain NUL characters'] }],
    ['a NUL in the description', { ...valid, description: 'a\u0000' }, { description: ['description must not contain NUL characters'] }],
    ['a NUL in the make', { ...valid, filters: { make: 'Pors\u0000che' } }, { 'filters.make': [expect.stringContaining('non-empty string')] }],
  ])('refuses %s, naming the member', (_case, body, details) => {
    expect(parseCreateInput(body)).toEqual({ ok: false, details });
  });

  it('names every bad member at once', () => {
    const outcome = parseCreateInput({ url: 'x', event_types: [], filters: { source: 'ebay' }, extra: 1 });
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(Object.keys(outcome.details).sort()).toEqual(['event_types', 'extra', 'filters.source', 'url']);
  });
});

describe('PATCH /webhooks/{id} body', () => {
  it('applies only the members given; {} clears the filters', () => {
    expect(parsePatchInput({ description: 'new' })).toEqual({ ok: true, value: { description: 'new' } });
    expect(parsePatchInput({ filters: {}, enabled: false })).toEqual({ ok: true, value: { filters: {}, enabled: false } });
    expect(parsePatchInput({})).toEqual({ ok: true, value: {} });
  });

  it('refuses wrong types and unknown members', () => {
    expect(parsePatchInput({ enabled: 'no' })).toEqual({ ok: false, details: { enabled: ['enabled must be true or false'] } });
    expect(parsePatchInput({ secret: 'x' })).toEqual({ ok: false, details: { secret: ['secret is not a recognised field'] } });
    expect(parsePatchInput(null)).toEqual({ ok: false, details: { body: ['the body must be a JSON object'] } });
  });

  it('names members called like built-in properties as unknown instead of failing on them', () => {
    const body = JSON.parse('{"toString":-1,"constructor":{},"__proto__":{"x":1},"hasOwnProperty":1,"filters":{"valueOf":2}}') as unknown;
    for (const outcome of [parsePatchInput(body), parseCreateInput(body)]) {
      expect(outcome.ok).toBe(false);
      const details = (outcome as { details: Record<string, string[]> }).details;
      expect(details.toString).toEqual(['toString is not a recognised field']);
      expect(details.constructor).toEqual(['constructor is not a recognised field']);
      expect(Object.getOwnPropertyDescriptor(details, '__proto__')?.value).toEqual(['__proto__ is not a recognised field']);
      expect(details.hasOwnProperty).toEqual(['hasOwnProperty is not a recognised field']);
      expect(details['filters.valueOf']).toEqual(['filters.valueOf is not a recognised field']);
    }
  });
});

describe('activation boundary', () => {
  const base: SubscriptionInput = {
    url: 'https://example.com/hooks',
    description: 'a',
    event_types: ['auction.created', 'bid.created'],
    filters: { make: 'Porsche', source: 'bringatrailer' },
  };

  it('keeps it for description edits, reordered event types and recapitalized make/source', () => {
    expect(changesActivation(base, { ...base, description: 'b' })).toBe(false);
    expect(changesActivation(base, { ...base, event_types: ['bid.created', 'auction.created'] })).toBe(false);
    expect(changesActivation(base, { ...base, filters: { make: 'PORSCHE', source: 'BringATrailer' } })).toBe(false);
  });

  it('moves it for a new URL, another set of event types, or filters that behave differently', () => {
    expect(changesActivation(base, { ...base, url: 'https://example.com/other' })).toBe(true);
    expect(changesActivation(base, { ...base, event_types: ['auction.created'] })).toBe(true);
    expect(changesActivation(base, { ...base, filters: { make: 'Ferrari', source: 'bringatrailer' } })).toBe(true);
    expect(changesActivation(base, { ...base, filters: { make: 'Porsche' } })).toBe(true);
    expect(changesActivation(base, { ...base, filters: { ...base.filters, auction_id: '1' } })).toBe(true);
  });
});
