export * from './webhooks.module';
export * from './subscriptions/subscription-input';
export * from './deliveries/retry-rules';
