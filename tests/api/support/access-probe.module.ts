import { Controller, Get, Module, Param, Query } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { ServiceUnavailableError } from '@cars/messaging';
import {
  ApiException,
  ApiPrincipal,
  CurrentPrincipal,
  InFlightCapped,
  Metered,
  Public,
  RequiresPaidPlan,
} from '@cars/service-gateway';

class CountedQuery {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(10)
  n?: number;
}

class ItemParams {
  @Type(() => Number)
  @IsInt()
  @Min(1)
  id: number;
}

class SlowQuery {
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(5000)
  ms: number;
}

class FailQuery {
  @IsIn(['500', '503'])
  status: '500' | '503';
}

/** The work of `GET /probe-access/held` requests: each waits here until the test lets it go. */
export class HeldWork {
  private readonly waiting: (() => void)[] = [];

  get count(): number {
    return this.waiting.length;
  }

  wait(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  releaseAll(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}

export const heldWork = new HeldWork();

/**
 * Routes shaped like the real ones, for testing API access on its own (registered only in
 * tests, through `gatewayImports`): counted, counted with validation, counted with a 404,
 * counted and failing, paid-only, authenticated but free, public.
 */
@Controller('probe-access')
export class AccessProbeController {
  @Get('open')
  open(@CurrentPrincipal() principal?: ApiPrincipal) {
    return { ok: true, account_id: principal?.accountId ?? null };
  }

  @Public()
  @Get('public')
  publicRoute() {
    return { ok: true };
  }

  @Metered()
  @Get('counted')
  counted(@Query() query: CountedQuery) {
    return { ok: true, n: query.n ?? null };
  }

  @Metered()
  @Get('items/:id')
  item(@Param() params: ItemParams) {
    if (params.id > 1000) throw new ApiException(404, { error: 'Not Found', message: `No item ${params.id}` });
    return { id: params.id };
  }

  @Metered()
  @Get('fail')
  fail(@Query() query: FailQuery) {
    if (query.status === '503') throw new ServiceUnavailableError('probe', new Error('down'));
    throw new Error('boom');
  }

  @Metered()
  @Get('slow')
  async slow(@Query() query: SlowQuery) {
    await new Promise((resolve) => setTimeout(resolve, query.ms));
    return { ok: true };
  }

  /** Counted and capped in flight, like /auctions; answers once the test releases `heldWork`. */
  @Metered()
  @InFlightCapped()
  @Get('held')
  async held() {
    await heldWork.wait();
    return { ok: true };
  }

  @Metered()
  @RequiresPaidPlan('Pricing statistics')
  @Get('paid')
  paid() {
    return { ok: true };
  }

  @RequiresPaidPlan('Webhooks', { verifiedEmail: true })
  @Get('verified')
  verified() {
    return { ok: true };
  }
}

@Module({ controllers: [AccessProbeController] })
export class AccessProbeModule {}
