export * from './api-access.config';
export * from './metered.decorator';
export * from './paid-plan.decorator';
export { InFlightCapped } from './in-flight';
