export * from './webhooks.module';
export * from './config/webhooks.options';
export * from './plans/plan-sweeper';
export * from './subscriptions/subscription-input';
export * from './deliveries/retry-rules';
export * from './config/reencrypt-secrets';
