import { StatsResponse } from '@cars/contracts';
import { PriceStatsFigures, PriceStatsRepository, PriceStatsResult, PriceStatsScope } from './price-stats.repository';
import { PriceStatsService } from './price-stats.service';

const NOW = new Date('2026-03-10T12:00:00Z');

function serviceWith(
  names: PriceStatsResult['names'],
  figures: Partial<PriceStatsFigures> = {},
): { service: PriceStatsService; calls: { scope: PriceStatsScope; first: string; last: string }[] } {
  const calls: { scope: PriceStatsScope; first: string; last: string }[] = [];
  const repository = {
    priceStats: async (scope: PriceStatsScope, first: string, last: string): Promise<PriceStatsResult> => {
      calls.push({ scope, first, last });
      return {
        names,
        figures: {
          completed: 0n,
          sold: 0n,
          sales: 0n,
          salesSumUsd: 0n,
          lowestUsd: null,
          highestUsd: null,
          middleUsd: [],
          months: [],
          ...figures,
        },
      };
    },
  } as unknown as PriceStatsRepository;
  return { service: new PriceStatsService(repository), calls };
}

const valueOf = (reply: unknown): StatsResponse => (reply as { ok: true; value: StatsResponse }).value;

describe('PriceStatsService', () => {
  it('points an unknown make to /makes and a wrongly-cased one to its exact name', async () => {
    const unknown = await serviceWith({ make: null, model: null }).service.getStats({ make: 'Trabant' }, NOW);
    expect(unknown).toEqual({
      ok: false,
      status: 400,
      body: expect.objectContaining({ error: 'Validation Error', details: { make: [expect.stringContaining('GET /makes')] } }),
    });
    const cased = await serviceWith({ make: 'Porsche', model: null }).service.getStats({ make: 'porsche' }, NOW);
    expect(cased.ok ? null : cased.body.details?.make[0]).toContain('did you mean "Porsche"');
  });

  it('points a model the make does not have to /models for that make', async () => {
    const unknown = await serviceWith({ make: 'Alfa Romeo', model: null }).service.getStats(
      { make: 'Alfa Romeo', model: 'Testarossa' },
      NOW,
    );
    expect(unknown.ok ? null : unknown.body.details?.model[0]).toContain('GET /models?make=Alfa%20Romeo');
    const cased = await serviceWith({ make: 'Alfa Romeo', model: 'Giulia' }).service.getStats(
      { make: 'Alfa Romeo', model: 'giulia' },
      NOW,
    );
    expect(cased.ok ? null : cased.body.details?.model[0]).toContain('did you mean "Giulia"');
  });

  it('builds the response: USD, rounding, exact median, 12 months with zero-filled gaps', async () => {
    const { service, calls } = serviceWith(
      { make: 'Porsche', model: '911' },
      {
        completed: 3n,
        sold: 2n,
        sales: 2n,
        salesSumUsd: 100001n,
        lowestUsd: 50000,
        highestUsd: 50001,
        middleUsd: [50000, 50001],
        months: [
          { month: '2025-04-01', sales: 1n, sumUsd: 50000n },
          { month: '2026-03-01', sales: 1n, sumUsd: 50001n },
        ],
      },
    );
    const value = valueOf(await service.getStats({ make: 'Porsche', model: '911', year_min: 1965 }, NOW));
    expect(calls).toEqual([
      { scope: { make: 'Porsche', model: '911', yearMin: 1965, yearMax: undefined }, first: '2025-04-01', last: '2026-03-01' },
    ]);
    expect(value).toMatchObject({
      currency: 'USD',
      total_sales: 2,
      average_price: 50000.5,
      median_price: 50000.5,
      lowest_price: 50000,
      highest_price: 50001,
      sell_through_rate: 0.6667,
    });
    expect(value.price_trend).toHaveLength(12);
    expect(value.price_trend[0]).toEqual({ date: '2025-04', avg_price: 50000, volume: 1 });
    expect(value.price_trend[1]).toEqual({ date: '2025-05', avg_price: 0, volume: 0 });
    expect(value.price_trend[11]).toEqual({ date: '2026-03', avg_price: 50001, volume: 1 });
  });

  it('answers zeros for a known make without sales', async () => {
    const value = valueOf(await serviceWith({ make: 'Alfa Romeo', model: null }).service.getStats({ make: 'Alfa Romeo' }, NOW));
    expect(value).toMatchObject({ total_sales: 0, average_price: 0, median_price: 0, lowest_price: 0, highest_price: 0, sell_through_rate: 0 });
    expect(value.price_trend.every((p) => p.volume === 0 && p.avg_price === 0)).toBe(true);
  });
});
