import { LIVE_SOURCE_IDS, SOURCES, SOURCE_IDS, isSourceId, sourceById } from './sources';

describe('sources', () => {
  it('lists the seven platforms, two of them live', () => {
    expect(SOURCE_IDS).toEqual(['bringatrailer', 'carsandbids', 'pcarmarket', 'hagerty', 'hemmings', 'collectingcars', 'carandclassic']);
    expect(LIVE_SOURCE_IDS).toEqual(['bringatrailer', 'carsandbids']);
  });

  it('gives each platform its currencies, a valid time zone and an https base address', () => {
    for (const id of ['bringatrailer', 'carsandbids', 'pcarmarket', 'hagerty', 'hemmings']) expect(sourceById(id).currencies).toEqual(['USD']);
    expect([...sourceById('collectingcars').currencies].sort()).toEqual(['AUD', 'EUR', 'GBP', 'USD']);
    expect([...sourceById('carandclassic').currencies].sort()).toEqual(['EUR', 'GBP']);
    for (const source of SOURCES) {
      expect(() => new Intl.DateTimeFormat('en-US', { timeZone: source.timezone })).not.toThrow();
      expect(source.baseUrl).toMatch(/^https:\/\/[a-z0-9.-]+/);
      expect(source.firstMonth).toMatch(/^\d{4}-\d{2}$/);
    }
    expect(sourceById('carandclassic').timezone).toBe('Europe/London');
    expect(sourceById('bringatrailer').timezone).toBe('America/Los_Angeles');
  });

  it('recognizes platform identifiers and rejects others', () => {
    expect(isSourceId('hemmings')).toBe(true);
    expect(isSourceId('ebay')).toBe(false);
    expect(() => sourceById('ebay')).toThrow(/unknown source/);
  });
});
