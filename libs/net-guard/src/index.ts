export * from './addresses';
export * from './destination';
export * from './pinned-connect';
