export * from './addresses';
export * from './destination';
