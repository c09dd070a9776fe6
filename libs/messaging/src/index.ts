export * from './in-process.transport';
export * from './rmq.options';
export * from './service-client';
export * from './messaging.module';
export * from './event-topology';
export * from './queue-inspector';
export * from './backoff';
