export * from './observation.schema';
export * from './observation.validation';
export * from './observation-headers';
export * from './observation-message';
