export * from './test-infra';
export * from './database';
export * from './factories/auctions.factory';
