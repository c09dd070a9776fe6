export * from './data-source';
export * from './reference';
export * from './database.module';
export * from './auction-record';
export * from './pg-listener';
export * from './pg';
export * from './read-pool';
export * from './instance-state';
