export * from './webhook-records';
