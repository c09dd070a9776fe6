export * from './console.module';
export * from './static-site';
