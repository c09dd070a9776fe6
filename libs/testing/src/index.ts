export * from './test-infra';
export * from './database';
export * from './factories/auctions.factory';
export * from './factories/observations.factory';
export * from './app-processes';
