export * from './gateway.module';
export * from './bootstrap';
export * from './http/api-exception';
export * from './auth';
export * from './metering';
export * from './account';
