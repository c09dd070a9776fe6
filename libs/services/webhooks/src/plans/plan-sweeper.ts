import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { accountsOverEndpointAllowance, enforceEndpointAllowance } from '@cars/accounts';
import { errorMessage } from '@cars/contracts';
import { PG_POOL, withTransaction } from '@cars/persistence';
import { Pool } from 'pg';
import { DEFAULT_PLAN_SWEEP_INTERVAL_MS, WEBHOOKS_OPTIONS, WebhooksOptions } from '../config/webhooks.options';

/**
 * Plan expiry without operator action (SPEC "States and transitions"): every interval, accounts
 * with more active endpoints than the plan in force allows — a plan that lapsed by time allows
 * none — have the newest paused and their pending work canceled. `accounts:set-plan` applies the
 * same rule in its own transaction; this catches what time alone changed.
 */
@Injectable()
export class PlanSweeper implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('PlanSweeper');
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    @Inject(WEBHOOKS_OPTIONS) private readonly options: WebhooksOptions,
  ) {}

  onModuleInit(): void {
    const every = this.options.planSweepIntervalMs ?? DEFAULT_PLAN_SWEEP_INTERVAL_MS;
    this.timer = setInterval(() => {
      this.running ??= this.sweep()
        .then(() => undefined)
        .catch((error: unknown) => this.logger.warn(`plan sweep failed, retried next interval: ${errorMessage(error)}`))
        .finally(() => (this.running = undefined));
    }, every);
    this.timer.unref();
  }

  /** One pass; returns how many endpoints were paused. */
  async sweep(): Promise<number> {
    let paused = 0;
    for (const accountId of await accountsOverEndpointAllowance(this.pool)) {
      const ids = await withTransaction(this.pool, (client) => enforceEndpointAllowance(client, accountId));
      if (ids.length > 0) this.logger.log(`paused ${ids.length} webhook endpoint(s) of account ${accountId}: beyond the plan in force`);
      paused += ids.length;
    }
    return paused;
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
