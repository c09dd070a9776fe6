export * from './webhook-records';
export * from './webhook.dto';
