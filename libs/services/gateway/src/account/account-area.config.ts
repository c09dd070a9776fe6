import { DynamicModule, Global, Module } from '@nestjs/common';
import { DEFAULT_PASSWORD_HASH_PARAMS, PasswordHashParams } from '@cars/accounts';
import { AccountAreaEnv, loadEnv } from '@cars/runtime';

/** The account area's settings (docs/api/account-area.md). */
export interface AccountAreaConfig {
  /** Origin of links in emails and of the console's pages; unset: the address and port the connection reached (never a request header). */
  publicBaseUrl?: string;
  /** Verification mail over SMTP; unset: the link is logged (unless `logVerificationLinks` is false). */
  smtpUrl?: string;
  /** Whether a link may be logged without SMTP: not in production (NODE_ENV=production). */
  logVerificationLinks: boolean;
  mailFrom: string;
  sessionIdleMs: number;
  sessionMaxAgeMs: number;
  verificationTtlMs: number;
  signInPerEmailPerMinute: number;
  signInPerAddressPerMinute: number;
  /** Verification mails an account may ask for per minute. */
  resendPerMinute: number;
  /** scrypt cost of new password hashes. */
  passwordHash: PasswordHashParams;
  /** Session and token expiry are judged at this time (tests move it instead of waiting). */
  now: () => Date;
}

export const ACCOUNT_AREA_CONFIG = Symbol('ACCOUNT_AREA_CONFIG');
export const ACCOUNT_AREA_OVERRIDES = Symbol('ACCOUNT_AREA_OVERRIDES');

/** The environment (validated: a bad value fails the boot), then any overrides set in code. */
export function loadAccountAreaConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<AccountAreaConfig> = {}): AccountAreaConfig {
  const e = loadEnv(AccountAreaEnv, env);
  return {
    publicBaseUrl: e.PUBLIC_BASE_URL,
    smtpUrl: e.SMTP_URL,
    logVerificationLinks: env.NODE_ENV !== 'production',
    mailFrom: e.MAIL_FROM,
    sessionIdleMs: e.SESSION_IDLE_TIMEOUT_MS,
    sessionMaxAgeMs: e.SESSION_MAX_AGE_MS,
    verificationTtlMs: e.EMAIL_VERIFICATION_TTL_MS,
    signInPerEmailPerMinute: e.SIGNIN_ATTEMPTS_PER_EMAIL_PER_MINUTE,
    signInPerAddressPerMinute: e.SIGNIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE,
    resendPerMinute: 1,
    passwordHash: DEFAULT_PASSWORD_HASH_PARAMS,
    now: () => new Date(),
    ...overrides,
  };
}

/**
 * Sets account area settings in code instead of the environment (tests): import
 * `AccountAreaConfigModule.forRoot({...})` next to the GatewayModule.
 */
@Global()
@Module({})
export class AccountAreaConfigModule {
  static forRoot(overrides: Partial<AccountAreaConfig>): DynamicModule {
    return {
      module: AccountAreaConfigModule,
      providers: [{ provide: ACCOUNT_AREA_OVERRIDES, useValue: overrides }],
      exports: [ACCOUNT_AREA_OVERRIDES],
    };
  }
}
