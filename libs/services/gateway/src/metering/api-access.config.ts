import { DynamicModule, Global, Module } from '@nestjs/common';
import { ApiAccessEnv, loadEnv } from '@cars/runtime';

/** How the gateway authenticates, burst-limits and meters (docs/api/accounts.md). */
export interface ApiAccessConfig {
  /** False: no authentication, burst limit or metering at all (benchmarks only). */
  enabled: boolean;
  /** Unset: per-process token buckets instead of Redis. */
  redisUrl?: string;
  redisKeyPrefix: string;
  redisTimeoutMs: number;
  burstRatePerSecond: number;
  burstCapacity: number;
  keyCacheTtlMs: number;
  /** Connections of the ledger pool (asynchronous commit). */
  meteringPoolSize: number;
  /** Leases of allowance (docs/adr/0007-metering-leases.md): block size, TTL, idle time. */
  leaseMaxUnits: number;
  leaseTtlMs: number;
  leaseIdleMs: number;
  /** Requests in flight per account and gateway process on `@InFlightCapped()` routes (0: no cap). */
  maxInFlightPerAccount: number;
  /** The time plan expiry is judged at, per request (tests move it instead of waiting). */
  now: () => Date;
}

export const API_ACCESS_CONFIG = Symbol('API_ACCESS_CONFIG');
export const API_ACCESS_OVERRIDES = Symbol('API_ACCESS_OVERRIDES');

/** The environment (validated: a bad value fails the boot), then any overrides set in code. */
export function loadApiAccessConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<ApiAccessConfig> = {},
): ApiAccessConfig {
  const e = loadEnv(ApiAccessEnv, env);
  return {
    enabled: e.METERING_ENABLED === 'true',
    redisUrl: e.REDIS_URL,
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    redisTimeoutMs: e.REDIS_TIMEOUT_MS,
    burstRatePerSecond: e.BURST_RATE_PER_SECOND,
    burstCapacity: e.BURST_CAPACITY,
    keyCacheTtlMs: e.API_KEY_CACHE_TTL_MS,
    meteringPoolSize: e.METERING_POOL_SIZE,
    leaseMaxUnits: e.METERING_LEASE_MAX_UNITS,
    leaseTtlMs: e.METERING_LEASE_TTL_MS,
    leaseIdleMs: e.METERING_LEASE_IDLE_MS,
    maxInFlightPerAccount: e.GATEWAY_MAX_IN_FLIGHT_PER_ACCOUNT,
    now: () => new Date(),
    ...overrides,
  };
}

/**
 * Sets API access settings in code instead of the environment (tests, benchmarks): import
 * `ApiAccessConfigModule.forRoot({...})` next to the GatewayModule.
 */
@Global()
@Module({})
export class ApiAccessConfigModule {
  static forRoot(overrides: Partial<ApiAccessConfig>): DynamicModule {
    return {
      module: ApiAccessConfigModule,
      providers: [{ provide: API_ACCESS_OVERRIDES, useValue: overrides }],
      exports: [API_ACCESS_OVERRIDES],
    };
  }
}
