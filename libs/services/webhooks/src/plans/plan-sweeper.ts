import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { errorMessage, NotifyChannels, parseAccountChange } from '@cars/contracts';
import { connectionUrlOf, PG_POOL, PgListener, withTransaction } from '@cars/persistence';
import { accountsOverEndpointAllowance } from '@cars/webhook-store';
import { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { DEFAULT_PLAN_SWEEP_INTERVAL_MS, WEBHOOKS_OPTIONS, WebhooksOptions } from '../config/webhooks.options';
import { enforceEndpointAllowance } from './endpoint-allowance';

/**
 * The downgrade rule of docs/api/webhooks.md, applied by the owner of the endpoints. A plan change is announced: the
 * `accounts` row's update notifies `account_changes` at commit (migration AccountChangeNotify),
 * and the account named is checked at once — endpoints beyond the allowance of the plan in force
 * paused, the newest first, their pending work canceled. Every interval, and whenever the listening
 * connection is (re)established, a sweep does the same for every account: what a missed
 * notification, a plan lapsing by time or this service being down left over.
 */
@Injectable()
export class PlanSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('PlanSweeper');
  private timer: NodeJS.Timeout | undefined;
  private listener: PgListener | undefined;
  private running: Promise<void> | undefined;
  private readonly checks = new Set<Promise<void>>();

  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly db: DataSource,
    @Inject(WEBHOOKS_OPTIONS) private readonly options: WebhooksOptions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const every = this.options.planSweepIntervalMs ?? DEFAULT_PLAN_SWEEP_INTERVAL_MS;
    this.timer = setInterval(() => this.sweepInBackground(), every);
    this.timer.unref();
    this.listener = new PgListener({
      url: connectionUrlOf(this.db),
      channels: [NotifyChannels.AccountChanges],
      applicationName: 'webhooks-plan-changes',
      onNotification: (_channel, payload) => {
        const change = parseAccountChange(payload);
        // A key's change leaves the plan as it was.
        if (change && !change.keyHash) this.checkInBackground(change.accountId);
      },
      onListening: () => this.sweepInBackground(),
      onError: (message) => this.logger.warn(`plan changes: ${message}; the sweep every ${every} ms still applies them`),
    });
    await this.listener.start();
  }

  /** One pass over every account; returns how many endpoints were paused. */
  async sweep(): Promise<number> {
    let paused = 0;
    for (const accountId of await accountsOverEndpointAllowance(this.pool)) paused += await this.enforce(accountId);
    return paused;
  }

  /** One account, as its plan changed; returns how many endpoints were paused. */
  async check(accountId: string): Promise<number> {
    const over = await accountsOverEndpointAllowance(this.pool, accountId);
    return over.length > 0 ? this.enforce(accountId) : 0;
  }

  private async enforce(accountId: string): Promise<number> {
    const ids = await withTransaction(this.pool, (client) => enforceEndpointAllowance(client, accountId));
    if (ids.length > 0) this.logger.log(`paused ${ids.length} webhook endpoint(s) of account ${accountId}: beyond the plan in force`);
    return ids.length;
  }

  private sweepInBackground(): void {
    this.running ??= this.sweep()
      .then(() => undefined)
      .catch((error: unknown) => this.logger.warn(`plan sweep failed, retried next interval: ${errorMessage(error)}`))
      .finally(() => (this.running = undefined));
  }

  private checkInBackground(accountId: string): void {
    const check: Promise<void> = this.check(accountId)
      .then(() => undefined)
      .catch((error: unknown) => this.logger.warn(`plan change of account ${accountId}: ${errorMessage(error)}; the sweep retries it`))
      .finally(() => this.checks.delete(check));
    this.checks.add(check);
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.listener?.stop();
    await Promise.all([this.running, ...this.checks]);
  }
}
