export * from './event-envelope';
export * from './event-routing';
export * from './event-message';
export * from './event-samples';
export * from './event-schema.generated';
