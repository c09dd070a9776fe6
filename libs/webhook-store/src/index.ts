// The one owner of `webhook_subscriptions` and `webhook_deliveries`: every statement that writes
// them is here (tests/workspace/table-ownership.spec.ts checks it). The webhooks and delivery
// services hold the logic and call these repositories.
export * from './subscriptions/subscriptions.repository';
export * from './subscriptions/sealed-secrets';
export * from './subscriptions/endpoint-allowance';
export * from './deliveries/deliveries.repository';
export * from './dispatch/schedule';
export * from './dispatch/dispatch.repository';
export * from './fan-out/fan-out.repository';
export * from './retention/retention.repository';
