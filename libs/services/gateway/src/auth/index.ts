export * from './auth.decorators';
export * from './principal';
export * from './api-access.module';
export * from './api-key.authenticator';
