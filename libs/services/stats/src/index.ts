export * from './stats.module';
