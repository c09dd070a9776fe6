import { Logger, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ApiKeysRepository } from '@cars/accounts';
import { API_ACCESS_CONFIG, API_ACCESS_OVERRIDES, ApiAccessConfig, loadApiAccessConfig } from '../metering/api-access.config';
import { BurstLimiter } from '../metering/burst-limiter';
import { InFlightLimiter } from '../metering/in-flight';
import { MeteringHooks } from '../metering/metering.hooks';
import { RequestAdmission } from '../metering/request-admission';
import { UsageMeter } from '../metering/usage-meter';
import { AccountChangeListener } from './account-change.listener';
import { ApiAccessGuard } from './api-access.guard';
import { ApiKeyAuthenticator } from './api-key.authenticator';

/**
 * API keys, plans, burst limit and monthly metering for every route of the gateway app:
 * the guard is global (APP_GUARD), so a new controller is authenticated unless it says
 * `@Public()`. Settings: ApiAccessEnv, or
 * `ApiAccessConfigModule.forRoot()` in code.
 */
@Module({
  providers: [
    {
      provide: API_ACCESS_CONFIG,
      inject: [{ token: API_ACCESS_OVERRIDES, optional: true }],
      useFactory: (overrides?: Partial<ApiAccessConfig>): ApiAccessConfig => {
        const config = loadApiAccessConfig(process.env, overrides ?? {});
        if (!config.enabled) {
          new Logger('ApiAccess').warn('METERING_ENABLED=false: NO authentication, burst limit or metering. Benchmarks only!');
        }
        return config;
      },
    },
    ApiKeysRepository,
    ApiKeyAuthenticator,
    AccountChangeListener,
    BurstLimiter,
    UsageMeter,
    MeteringHooks,
    RequestAdmission,
    InFlightLimiter,
    { provide: APP_GUARD, useClass: ApiAccessGuard },
  ],
  exports: [API_ACCESS_CONFIG, ApiKeyAuthenticator, BurstLimiter, RequestAdmission, UsageMeter],
})
export class ApiAccessModule {}

