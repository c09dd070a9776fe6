export * from './gateway.module';
export * from './bootstrap';
export * from './health/gateway-readiness';
export * from './http/api-exception';
export * from './auth';
export * from './metering';
export * from './account';
