import 'reflect-metadata';
import { validateObservation } from '@cars/contracts';
import { LIVE_SOURCE_IDS, SOURCES, findMake, resolveMakeAlias, sourceById } from '@cars/persistence';
import { LIVE_WINDOW_DAYS, RECENT_BID_DAYS, generateObservations, idNamespace, newSummary, type GenerationSummary } from './generator';
import { ENDED_STATUSES, LIVE_STATUSES, type Observation } from './observation';
import { DAY_MS, localToUtc, type SourceZone } from './time';
import { isValidVin } from './vin';

const TODAY = '2026-11-21';
const NOW = Date.UTC(2026, 10, 21, 12);
const AUCTION_KEYS = [
  'url', 'title', 'status', 'price', 'currency', 'year', 'make', 'model', 'auction_end_at', 'auction_end_date',
  'bid_count', 'sale_type', 'price_type', 'mileage', 'mileage_unit', 'vin', 'title_status', 'city', 'state', 'zip',
  'country_code', 'seller_username', 'seller_type', 'has_reserve', 'engine', 'drivetrain', 'transmission', 'body_style',
  'exterior_color', 'interior_color', 'description', 'ownership_history', 'modifications', 'known_flaws',
  'recent_service_history', 'listing_details', 'featured_image_url', 'views', 'watches', 'likes', 'comments',
];

function lines(options: Parameters<typeof generateObservations>[0]): string[] {
  return Array.from(generateObservations(options), (o) => JSON.stringify(o));
}

function wallToUtc(source: string, wall: string): number {
  const zone = sourceById(source).timezone as SourceZone;
  const [date, time] = wall.split('T');
  const [y, m, d] = date.split('-').map(Number);
  const [hh, mm, ss] = time.split(':').map(Number);
  return localToUtc(zone, Date.UTC(y, m - 1, d, hh, mm, ss));
}

describe('generateObservations', () => {
  let data: Observation[];
  let summary: GenerationSummary;

  beforeAll(() => {
    summary = newSummary();
    data = Array.from(generateObservations({ auctions: 6000, live: 400, seed: 'spec', today: TODAY }, summary));
  });

  it('is byte-identical for the same seed and today, and differs otherwise', () => {
    const a = lines({ auctions: 800, live: 50, seed: 42, today: TODAY });
    const b = lines({ auctions: 800, live: 50, seed: '42', today: TODAY });
    expect(a.join('\n')).toBe(b.join('\n'));
    const c = lines({ auctions: 800, live: 50, seed: 43, today: TODAY });
    expect(c.join('\n')).not.toBe(a.join('\n'));
    const d = lines({ auctions: 800, live: 50, seed: 42, today: '2026-11-22' });
    expect(d.join('\n')).not.toBe(a.join('\n'));
  });

  it('yields the requested counts: completed auctions first, then live ones', () => {
    expect(data).toHaveLength(6400);
    expect(summary.completed).toBe(6000);
    expect(summary.live).toBe(400);
    expect(data.slice(0, 6000).every((o) => (ENDED_STATUSES as readonly string[]).includes(o.auction!.status))).toBe(true);
    expect(data.slice(6000).every((o) => (LIVE_STATUSES as readonly string[]).includes(o.auction!.status))).toBe(true);
  });

  it('writes exactly the documented observation shape, which the observation contract accepts', () => {
    for (const o of data) {
      expect(Object.keys(o)).toEqual(['source', 'source_auction_id', 'observed_at', 'auction', 'bids']);
      expect(Object.keys(o.auction!)).toEqual(AUCTION_KEYS);
      expect(o.observed_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
      for (const bid of o.bids) expect(Object.keys(bid)).toEqual(['source_bid_id', 'bidder_name', 'amount', 'currency', 'bid_at']);
    }
    for (const o of data) {
      const outcome = validateObservation(JSON.parse(JSON.stringify(o)));
      expect(outcome).toMatchObject({ ok: true });
    }
  });

  it('keeps source auction ids and source bid ids unique per source', () => {
    const auctions = new Set<string>();
    const bids = new Set<string>();
    for (const o of data) {
      const key = `${o.source}/${o.source_auction_id}`;
      expect(auctions.has(key)).toBe(false);
      auctions.add(key);
      for (const bid of o.bids) {
        const bidKey = `${o.source}/${bid.source_bid_id}`;
        expect(bids.has(bidKey)).toBe(false);
        bids.add(bidKey);
      }
    }
  });

  it('puts the ids of different seeds in different namespaces; the default seed (the demo data set) keeps plain ids', () => {
    const keys = (options: Parameters<typeof generateObservations>[0]) => {
      const out = new Set<string>();
      for (const o of generateObservations({ auctions: 1500, live: 100, today: TODAY, ...options })) {
        out.add(`a:${o.source}/${o.source_auction_id}`);
        for (const bid of o.bids) out.add(`b:${o.source}/${bid.source_bid_id}`);
      }
      return out;
    };
    const demo = keys({});
    const other = keys({ seed: 4242 });
    const named = keys({ seed: 4242, namespace: 'batch_2' });
    expect([...demo].filter((k) => other.has(k))).toEqual([]);
    expect([...other].filter((k) => named.has(k))).toEqual([]);
    expect([...demo].some((k) => k === 'a:bringatrailer/30000')).toBe(true);
    expect([...other].every((k) => /^[ab]:[a-z]+\/s4242-/.test(k))).toBe(true);
    expect([...named].every((k) => /^[ab]:[a-z]+\/batch_2-/.test(k))).toBe(true);
    expect(data[0].source_auction_id.startsWith('sspec-')).toBe(true);
    expect(idNamespace('1')).toBe('');
    expect(idNamespace(7)).toBe('s7');
    expect(idNamespace('a seed with spaces')).toMatch(/^h[0-9a-f]{16}$/);
    expect(idNamespace('a seed with spaces')).not.toBe(idNamespace('a seed with spaces!'));
    expect(() => Array.from(generateObservations({ namespace: 'no spaces' }))).toThrow(/namespace must be/);
  });

  it('uses every source with its own currencies, time format and statuses', () => {
    const bySource = new Map<string, Observation[]>();
    for (const o of data) {
      const list = bySource.get(o.source) ?? [];
      list.push(o);
      bySource.set(o.source, list);
    }
    expect([...bySource.keys()].sort()).toEqual(SOURCES.map((s) => s.id).sort());
    for (const [source, list] of bySource) {
      const def = sourceById(source);
      const currencies = new Set(list.map((o) => o.auction!.currency));
      for (const c of currencies) expect(def.currencies).toContain(c);
      const completed = list.filter((o) => (ENDED_STATUSES as readonly string[]).includes(o.auction!.status));
      const sold = completed.filter((o) => o.auction!.status === 'sold').length;
      const ran = completed.filter((o) => ['sold', 'reserve not met'].includes(o.auction!.status)).length;
      expect(sold / ran).toBeGreaterThan(0.55);
      expect(sold / ran).toBeLessThan(0.92);
      for (const o of completed) {
        if (def.dateOnly) expect(o.auction!.auction_end_at).toBeNull();
        else expect(o.auction!.auction_end_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
      }
    }
    expect(new Set(bySource.get('collectingcars')!.map((o) => o.auction!.currency))).toEqual(new Set(['GBP', 'EUR', 'USD', 'AUD']));
    expect(bySource.get('collectingcars')!.some((o) => o.auction!.mileage_unit === 'km')).toBe(true);
    expect(new Set(bySource.get('carandclassic')!.map((o) => o.auction!.currency))).toEqual(new Set(['GBP', 'EUR']));
  });

  it('ends completed auctions from 2018-01-01 to before today and observes them shortly after', () => {
    let previousDate = '';
    for (const o of data.slice(0, 6000)) {
      const a = o.auction!;
      expect(a.auction_end_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(a.auction_end_date! >= '2018-01-01').toBe(true);
      expect(a.auction_end_date! < TODAY).toBe(true);
      expect(a.auction_end_date! >= previousDate).toBe(true);
      previousDate = a.auction_end_date!;
      const observed = Date.parse(o.observed_at);
      expect(observed).toBeLessThanOrEqual(NOW);
      if (a.auction_end_at) {
        expect(a.auction_end_at.slice(0, 10)).toBe(a.auction_end_date);
        const end = wallToUtc(o.source, a.auction_end_at);
        expect(observed).toBeGreaterThan(end);
        expect(observed - end).toBeLessThan(3 * DAY_MS);
      }
    }
  });

  it('grows volume over the years and keeps each of the last 12 months well stocked with sales', () => {
    const perYear = (year: string): number => data.filter((o) => o.auction!.auction_end_date?.startsWith(year)).length;
    expect(perYear('2025')).toBeGreaterThan(perYear('2019') * 1.8);
    for (let back = 1; back <= 12; back++) {
      const d = new Date(Date.UTC(2026, 10 - back, 1));
      const month = d.toISOString().slice(0, 7);
      expect(summary.soldByMonth[month] ?? 0).toBeGreaterThan(40);
    }
  });

  it('puts live auctions on the two live sources only, ending within the window after today', () => {
    const live = data.slice(6000);
    expect(new Set(live.map((o) => o.source))).toEqual(new Set(LIVE_SOURCE_IDS));
    expect(live.some((o) => o.auction!.status === 'coming soon')).toBe(true);
    for (const o of live) {
      const a = o.auction!;
      const end = wallToUtc(o.source, a.auction_end_at!);
      const observed = Date.parse(o.observed_at);
      expect(end).toBeGreaterThan(NOW);
      expect(end).toBeLessThanOrEqual(NOW + (LIVE_WINDOW_DAYS + 1) * DAY_MS);
      expect(Math.abs(observed - NOW)).toBeLessThan(DAY_MS);
      if (a.status === 'coming soon') {
        expect(o.bids).toEqual([]);
        expect(a.price).toBeNull();
      }
      for (const bid of o.bids) expect(wallToUtc(o.source, bid.bid_at)).toBeLessThan(observed);
      if (o.bids.length > 0) expect(a.price).toBe(o.bids[o.bids.length - 1].amount);
    }
    expect(live.filter((o) => o.bids.length > 0).length).toBeGreaterThan(live.length / 3);
  });

  it('gives bids to live auctions and recent completed ones of the live sources only, as rising ladders', () => {
    const recent = new Date(NOW - RECENT_BID_DAYS * DAY_MS).toISOString().slice(0, 10);
    let withBids = 0;
    for (const o of data) {
      const a = o.auction!;
      const def = sourceById(o.source);
      if (o.bids.length === 0) continue;
      withBids++;
      expect(def.live).toBe(true);
      if (a.auction_end_date) expect(a.auction_end_date >= recent).toBe(true);
      expect(a.bid_count).toBe(o.bids.length);
      const end = wallToUtc(o.source, a.auction_end_at!);
      let previousAmount = -1;
      let previousAt = -Infinity;
      let previousBidder: string | null = null;
      for (const bid of o.bids) {
        expect(bid.amount).toBeGreaterThan(previousAmount);
        expect(bid.currency).toBe(a.currency);
        const at = wallToUtc(o.source, bid.bid_at);
        expect(at).toBeGreaterThan(previousAt);
        expect(at).toBeLessThan(end);
        expect(bid.bidder_name).not.toBe(previousBidder);
        previousAmount = bid.amount;
        previousAt = at;
        previousBidder = bid.bidder_name;
      }
      if (a.status === 'sold' || a.status === 'reserve not met') expect(o.bids[o.bids.length - 1].amount).toBe(a.price);
      const bidders = new Set(o.bids.map((b) => b.bidder_name));
      if (o.bids.length >= 2) expect(bidders.size).toBeGreaterThanOrEqual(2);
      expect(bidders.size).toBeLessThanOrEqual(o.bids.length);
    }
    expect(withBids).toBeGreaterThan(200);
    const recentCompleted = data.slice(0, 6000).filter((o) => sourceById(o.source).live && o.auction!.auction_end_date! >= recent && o.auction!.status === 'sold');
    expect(recentCompleted.length).toBeGreaterThan(50);
    for (const o of recentCompleted) expect(o.bids.length).toBeGreaterThan(0);
  });

  it('prices sold and unsold auctions the way the source reports them', () => {
    for (const o of data.slice(0, 6000)) {
      const a = o.auction!;
      switch (a.status) {
        case 'sold':
          expect(a.price).toBeGreaterThan(0);
          expect(a.price_type).toBe('sold');
          break;
        case 'reserve not met':
          expect(a.price).toBeGreaterThan(0);
          expect(a.price_type).toBe('bid');
          expect(a.has_reserve).toBe(true);
          break;
        default:
          expect(a.price).toBeNull();
      }
      expect(a.sale_type).toBe('auction');
      if (a.has_reserve === false && a.status === 'reserve not met') throw new Error('no-reserve auction unsold');
    }
  });

  it('writes VINs for 1981+ and shorter chassis numbers before', () => {
    let vins = 0;
    for (const o of data) {
      const a = o.auction!;
      if (a.vin == null || a.year == null) continue;
      if (a.year >= 1981) {
        expect(isValidVin(a.vin)).toBe(true);
        vins++;
      } else expect(a.vin.length).toBeLessThan(17);
    }
    expect(vins).toBeGreaterThan(2000);
  });

  it('relists some cars: a VIN seen again belongs to the same year, make and source', () => {
    const seen = new Map<string, Observation>();
    let repeats = 0;
    for (const o of data) {
      const vin = o.auction!.vin;
      if (!vin) continue;
      const first = seen.get(vin);
      if (first) {
        repeats++;
        expect([o.source, o.auction!.year, o.auction!.make]).toEqual([first.source, first.auction!.year, first.auction!.make]);
      } else seen.set(vin, o);
    }
    expect(repeats).toBeGreaterThan(10);
  });

  it('uses many canonical makes and models, with a minority of alias spellings', () => {
    expect(summary.makes.size).toBeGreaterThan(100);
    expect(summary.models.size).toBeGreaterThan(600);
    const share = summary.aliasedMakes / (summary.completed + summary.live);
    expect(share).toBeGreaterThan(0.04);
    expect(share).toBeLessThan(0.25);
    const mercedes = data.filter((o) => findMake('Mercedes-Benz')!.aliases.includes(o.auction!.make ?? ''));
    expect(mercedes.length).toBeGreaterThan(0);
    // Non-vehicle listings exist, under excluded makes.
    expect(summary.junk).toBeGreaterThan(0);
  });

  it('has repeat sellers, both private and dealers, with consistent locations', () => {
    const bySeller = new Map<string, Observation[]>();
    for (const o of data) {
      const key = `${o.source}/${o.auction!.seller_username}`;
      const list = bySeller.get(key) ?? [];
      list.push(o);
      bySeller.set(key, list);
    }
    const repeat = [...bySeller.values()].filter((l) => l.length > 1);
    expect(repeat.length).toBeGreaterThan(300);
    for (const list of repeat) {
      expect(new Set(list.map((o) => `${o.auction!.city}|${o.auction!.seller_type}`)).size).toBe(1);
    }
    expect(data.some((o) => o.auction!.seller_type === 'dealer')).toBe(true);
    expect(data.some((o) => o.auction!.seller_type === 'private')).toBe(true);
  });

  it('writes titles and descriptions with real keywords', () => {
    const text = data.map((o) => `${o.auction!.title} ${o.auction!.description}`.toLowerCase());
    for (const keyword of ['matching numbers', 'restor', 'rust', 'manual', 'turbo', 'red', 'no reserve']) {
      expect(text.filter((t) => t.includes(keyword)).length).toBeGreaterThan(20);
    }
    const vehicles = data.filter((x) => resolveMakeAlias(x.auction!.make!) === null || !('excluded' in resolveMakeAlias(x.auction!.make!)!));
    expect(data.length - vehicles.length).toBe(summary.junk);
    for (const o of vehicles) {
      expect(o.auction!.year).not.toBeNull();
      expect(o.auction!.title).toContain(String(o.auction!.year));
      expect(o.auction!.title).toContain(o.auction!.make!);
    }
    const units = new Set(data.map((o) => o.auction!.mileage_unit));
    expect(units).toEqual(new Set(['mi', 'km', null]));
    for (const o of data) expect(o.auction!.mileage == null).toBe(o.auction!.mileage_unit == null);
  });

  it('rejects bad options', () => {
    expect(() => Array.from(generateObservations({ auctions: -1 }))).toThrow(/auctions/);
    expect(() => Array.from(generateObservations({ today: '2017-01-01' }))).toThrow(/today/);
    expect(() => Array.from(generateObservations({ today: 'soon' }))).toThrow(/invalid date/);
  });
});
