import { Injectable } from '@nestjs/common';
import {
  PriceTrendPoint,
  RpcReply,
  rpcError,
  rpcOk,
  SELL_THROUGH_DECIMALS,
  STATS_PRICE_DECIMALS,
  StatsQueryDto,
  StatsResponse,
  validationError,
} from '@cars/contracts';
import { medianOf, roundedRatio, trendMonths } from './price-stats.math';
import { PriceStatsFigures, PriceStatsRepository } from './price-stats.repository';

/** Pricing statistics of GET /stats (docs/api/stats.md). */
@Injectable()
export class PriceStatsService {
  constructor(private readonly repository: PriceStatsRepository) {}

  async getStats(query: StatsQueryDto, now: Date = new Date()): Promise<RpcReply<StatsResponse>> {
    const months = trendMonths(now);
    // One statement resolves the names and reads the figures: a valid request costs one round trip.
    const { names, figures } = await this.repository.priceStats(
      { make: query.make, model: query.model, yearMin: query.year_min, yearMax: query.year_max },
      `${months[0]}-01`,
      `${months[months.length - 1]}-01`,
    );
    if (names.make === null) {
      return rpcError(400, validationError({ make: [`unknown make "${query.make}"; GET /makes lists the valid names`] }));
    }
    if (names.make !== query.make) {
      return rpcError(
        400,
        validationError({ make: [`unknown make "${query.make}"; did you mean "${names.make}"? Make names are exact (GET /makes)`] }),
      );
    }
    if (query.model !== undefined && names.model !== query.model) {
      const models = `GET /models?make=${encodeURIComponent(names.make)}`;
      const hint = names.model === null ? '' : `did you mean "${names.model}"? `;
      return rpcError(
        400,
        validationError({ model: [`unknown model "${query.model}" for make "${names.make}"; ${hint}${models} lists the valid names`] }),
      );
    }
    return rpcOk(toResponse(figures, months));
  }
}

function toResponse(figures: PriceStatsFigures, months: string[]): StatsResponse {
  const byMonth = new Map(figures.months.map((m) => [m.month.slice(0, 7), m]));
  const price_trend: PriceTrendPoint[] = months.map((date) => {
    const month = byMonth.get(date);
    return {
      date,
      avg_price: month ? roundedRatio(month.sumUsd, month.sales, STATS_PRICE_DECIMALS) : 0,
      volume: month ? Number(month.sales) : 0,
    };
  });
  return {
    currency: 'USD',
    total_sales: Number(figures.sales),
    average_price: roundedRatio(figures.salesSumUsd, figures.sales, STATS_PRICE_DECIMALS),
    median_price: medianOf(figures.middleUsd),
    lowest_price: figures.lowestUsd ?? 0,
    highest_price: figures.highestUsd ?? 0,
    sell_through_rate: roundedRatio(figures.sold, figures.completed, SELL_THROUGH_DECIMALS),
    price_trend,
  };
}
