import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IntegerParam, NotGreaterThan, RequiredNameParam, TextParam } from './auctions.validators';

/** Number of monthly points in `price_trend`: the current calendar month (UTC) and the 11 before. */
export const PRICE_TREND_MONTHS = 12;

/** Decimal places of `average_price`, `median_price` and trend `avg_price` (USD, rounded half up). */
export const STATS_PRICE_DECIMALS = 2;

/** Decimal places of `sell_through_rate` (rounded half up). */
export const SELL_THROUGH_DECIMALS = 4;

/** Auction statuses that count as a completed auction in `sell_through_rate`'s denominator. */
export const COMPLETED_AUCTION_STATUSES = ['sold', 'reserve not met', 'bid to'] as const;

const MAKE_MAX_LENGTH = 100;

/** GET /stats query; also the request of `StatsPatterns.GetPriceStats` (validated again on consume). */
export class StatsQueryDto {
  @ApiProperty({
    description: 'Exact make name from /makes (`ocd_make_name`). Required; an unknown make is a 400 pointing to /makes.',
    minLength: 1,
    maxLength: MAKE_MAX_LENGTH,
    example: 'Porsche',
  })
  @RequiredNameParam(MAKE_MAX_LENGTH, 'an exact make name from GET /makes')
  make: string;

  @ApiPropertyOptional({
    description:
      'Exact model name from /models?make=… (`ocd_model_name`). A model the make does not have is a 400 pointing to /models.',
    minLength: 1,
    maxLength: 100,
    example: '911',
  })
  @TextParam(100)
  model?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: 9999,
    description: 'Lowest model year (inclusive); not above `year_max`. Auctions without a model year are then left out.',
    example: 1965,
  })
  @IntegerParam(0, 9999)
  @NotGreaterThan('year_max')
  year_min?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: 9999,
    description: 'Highest model year (inclusive). Auctions without a model year are then left out.',
    example: 1973,
  })
  @IntegerParam(0, 9999)
  year_max?: number;
}

export class PriceTrendPoint {
  @ApiProperty({ type: 'string', pattern: '^\\d{4}-\\d{2}$', description: 'Calendar month (UTC), YYYY-MM.', example: '2026-01' })
  date: string;

  @ApiProperty({
    type: 'number',
    description:
      'Average USD sale price of the month, rounded to 2 decimals; 0 when the month has no sales (`volume` 0).',
    example: 128450.5,
  })
  avg_price: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Number of sales ending in the month.', example: 42 })
  volume: number;
}

export class StatsResponse {
  @ApiProperty({ type: 'string', enum: ['USD'], description: 'All prices are US dollars (converted at the month of sale).', example: 'USD' })
  currency: 'USD';

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Sold auctions in scope with a known price (the population of every price figure).',
    example: 1843,
  })
  total_sales: number;

  @ApiProperty({ type: 'number', description: 'Mean sale price, rounded half up to 2 decimals; 0 without sales.', example: 131204.37 })
  average_price: number;

  @ApiProperty({
    type: 'number',
    description:
      'Exact median sale price: the middle price, or the mean of the two middle prices for an even count (so it ends in .00 or .50); 0 without sales.',
    example: 98500,
  })
  median_price: number;

  @ApiProperty({ type: 'number', description: 'Lowest sale price; 0 without sales.', example: 8200 })
  lowest_price: number;

  @ApiProperty({ type: 'number', description: 'Highest sale price; 0 without sales.', example: 1650000 })
  highest_price: number;

  @ApiProperty({
    type: 'number',
    minimum: 0,
    maximum: 1,
    description:
      'Sold auctions divided by completed auctions in scope, rounded half up to 4 decimals; 0 when none completed. ' +
      'Completed: ended (not live) with status sold, reserve not met or bid to; canceled, withdrawn and unknown ' +
      'results are not counted. A sale whose price is unknown counts here but not in the price figures.',
    example: 0.7213,
  })
  sell_through_rate: number;

  @ApiProperty({
    type: () => PriceTrendPoint,
    isArray: true,
    description:
      'Always 12 points, oldest first: the current calendar month (UTC) and the 11 before it, by auction end date.',
  })
  price_trend: PriceTrendPoint[];
}
