export * from './account.module';
export { AccountAreaConfig, AccountAreaConfigModule, loadAccountAreaConfig } from './account-area.config';
export { SESSION_COOKIE, isLoopbackHost } from './session-cookie';
