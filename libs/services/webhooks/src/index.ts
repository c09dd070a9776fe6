export * from './webhooks.module';
export * from './subscriptions/subscription-input';
