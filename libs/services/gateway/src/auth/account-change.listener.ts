import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { NotifyChannels, parseAccountChange } from '@cars/contracts';
import { connectionUrlOf, PgListener } from '@cars/persistence';
import { DataSource } from 'typeorm';
import { API_ACCESS_CONFIG, ApiAccessConfig } from '../metering/api-access.config';
import { ApiKeyAuthenticator } from './api-key.authenticator';

/**
 * Account changes take effect at once on every gateway: the database notifies at commit, this
 * listener evicts the account's (or key's) cached principal, and the next request reads it anew.
 * After a lost connection everything is forgotten, since notifications may have been missed.
 */
@Injectable()
export class AccountChangeListener implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('AccountChanges');
  private listener?: PgListener;

  constructor(
    private readonly db: DataSource,
    private readonly authenticator: ApiKeyAuthenticator,
    @Inject(API_ACCESS_CONFIG) private readonly config: ApiAccessConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    if (!this.config.enabled) return;
    this.listener = new PgListener({
      url: connectionUrlOf(this.db),
      channels: [NotifyChannels.AccountChanges],
      applicationName: 'gateway-account-changes',
      onNotification: (_channel, payload) => {
        const change = parseAccountChange(payload);
        if (!change) return this.authenticator.clear();
        this.authenticator.forgetAccount(change.accountId);
        if (change.keyHash) this.authenticator.forgetKey(change.keyHash);
      },
      onListening: () => this.authenticator.clear(),
      onError: (message) => this.logger.warn(message),
    });
    await this.listener.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.listener?.stop();
  }
}
