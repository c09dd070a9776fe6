export * from './webhook-signature';
export * from './secret-cipher';
