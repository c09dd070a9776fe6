export * from './api-access.config';
export * from './metered.decorator';
export { InFlightCapped } from './in-flight';
