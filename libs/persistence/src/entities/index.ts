export * from './reference.entities';
export * from './auction.entities';
export * from './account.entities';
