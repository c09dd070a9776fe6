export * from './api-access.config';
export * from './metered.decorator';
