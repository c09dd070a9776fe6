import 'reflect-metadata';
import { loadApiAccessConfig } from './api-access.config';

describe('loadApiAccessConfig', () => {
  it('has the documented defaults, and judges plan expiry on the wall clock', () => {
    const { now, ...settings } = loadApiAccessConfig({});
    expect(Math.abs(now().getTime() - Date.now())).toBeLessThan(1000);
    expect(settings).toEqual({
      enabled: true,
      redisUrl: undefined,
      redisKeyPrefix: 'cars:',
      redisTimeoutMs: 100,
      burstRatePerSecond: 10,
      burstCapacity: 20,
      keyCacheTtlMs: 10000,
      meteringPoolSize: 8,
      leaseMaxUnits: 64,
      leaseTtlMs: 30000,
      leaseIdleMs: 10000,
      maxInFlightPerAccount: 4,
    });
  });

  it('reads the environment, then overrides set in code', () => {
    const config = loadApiAccessConfig(
      { REDIS_URL: 'redis://10.0.0.5:6379', BURST_RATE_PER_SECOND: '2.5', BURST_CAPACITY: '5', METERING_ENABLED: 'false' },
      { burstCapacity: 7 },
    );
    expect(config).toMatchObject({ redisUrl: 'redis://10.0.0.5:6379', burstRatePerSecond: 2.5, burstCapacity: 7, enabled: false });
  });

  it('refuses a key cache longer than 30 s, so a revoked key always stops within 30 s', () => {
    expect(() => loadApiAccessConfig({ API_KEY_CACHE_TTL_MS: '30001' })).toThrow(/API_KEY_CACHE_TTL_MS/);
    expect(loadApiAccessConfig({ API_KEY_CACHE_TTL_MS: '30000' }).keyCacheTtlMs).toBe(30000);
  });

  it('refuses malformed values with the variable named', () => {
    expect(() => loadApiAccessConfig({ REDIS_URL: 'http://x' })).toThrow(/REDIS_URL/);
    expect(() => loadApiAccessConfig({ METERING_ENABLED: 'no' })).toThrow(/METERING_ENABLED/);
    expect(() => loadApiAccessConfig({ BURST_CAPACITY: '0' })).toThrow(/BURST_CAPACITY/);
    expect(() => loadApiAccessConfig({ BURST_RATE_PER_SECOND: 'fast' })).toThrow(/BURST_RATE_PER_SECOND/);
  });
});
