export * from './event-envelope';
export * from './event-routing';
export * from './event-message';
