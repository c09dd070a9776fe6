export * from './auth.decorators';
export type { ApiPrincipal } from '../http/request-context';
export * from './api-access.module';
export * from './api-key.authenticator';
