import { applyDecorators, Controller, Get, Inject, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { StatsPatterns, StatsQueryDto, StatsResponse } from '@cars/contracts';
import { ServiceClient, STATS_CLIENT } from '@cars/messaging';
import { ApiAccessErrors, ApiMeteredOk, ApiPaidPlanRequired, ApiValidationError } from '../auctions/api-responses';
import { answerOf } from '../auctions/service-answer';
import { InFlightCapped } from '../metering/in-flight';
import { Metered } from '../metering/metered.decorator';
import { RequiresPaidPlan } from '../metering/paid-plan.decorator';

const DESCRIPTION = [
  'Pricing statistics of one make (optionally one model and a model-year range), in US dollars.',
  '',
  '- **Sales**: auctions that ended sold (`auction_status` `sold`, not live) with a known price. Every price is ' +
    'converted to USD at ingestion with the shipped monthly FX table (rate of the month the auction ended).',
  '- **`average_price`**: mean, rounded half up to 2 decimals. **`median_price`**: exact — the middle price, or the ' +
    'mean of the two middle prices for an even count. **`lowest_price`**, **`highest_price`**: whole USD.',
  '- **`sell_through_rate`**: sold / completed auctions in scope, rounded half up to 4 decimals. Completed means ' +
    'ended (not live) with status `sold`, `reserve not met` or `bid to`; `canceled`, `withdrawn` and `unknown` ' +
    'results are left out of both sides.',
  '- **`price_trend`**: always 12 points, oldest first — the current calendar month (UTC) and the 11 before it, by ' +
    '`auction_end_date`. A month without sales has `volume` 0 and `avg_price` 0.',
  '- A known make with no sales in scope answers 200 with zeros (and 12 zero points).',
  '- `year_min`/`year_max` are inclusive; when either is given, auctions without a model year are left out.',
  '- 400 `Validation Error`: `make` missing, an unknown make (see `/makes`), a model the make does not have ' +
    '(see `/models?make=…`), `year_min` above `year_max`, or an unknown parameter.',
  '- Answers are never stale: the figures read rollups that ingestion updates in the same transaction.',
  '',
  'Requires a paid plan (1K, 10K or 100K): 403 `Forbidden` on the Free plan. Counts against the monthly allowance.',
].join('\n');

/** GET /stats over the stats service; shared with the MCP tool `get_price_stats` and `/account/stats`. */
export async function getPriceStats(stats: ServiceClient, params: StatsQueryDto): Promise<StatsResponse> {
  return answerOf(await stats.send(StatsPatterns.GetPriceStats, params));
}

/**
 * What `/stats` is, wherever it is mounted (here, and `/account/stats` for console sessions): paid
 * plan, metered, capped in flight per account, and its OpenAPI description. The guard of the
 * mount reads the same metadata.
 */
export const StatsRoute = () =>
  applyDecorators(
    RequiresPaidPlan('Pricing statistics'),
    Metered(),
    InFlightCapped(),
    ApiOperation({ summary: 'Pricing statistics with a 12-month trend', description: DESCRIPTION }),
    ApiMeteredOk(StatsResponse),
    ApiValidationError(true),
    ApiPaidPlanRequired(),
  );

@ApiTags('Statistics')
@ApiBearerAuth()
@Controller()
export class StatsController {
  constructor(@Inject(STATS_CLIENT) private readonly stats: ServiceClient) {}

  @Get('stats')
  @StatsRoute()
  @ApiAccessErrors('stats')
  getStats(@Query() query: StatsQueryDto): Promise<StatsResponse> {
    return getPriceStats(this.stats, query);
  }
}
