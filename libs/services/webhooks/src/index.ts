export * from './webhooks.module';
