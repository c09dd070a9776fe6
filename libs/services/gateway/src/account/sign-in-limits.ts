import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ErrorNames } from '@cars/contracts';
import { ApiException } from '../http/api-exception';
import { BurstLimiter } from '../metering/burst-limiter';
import { ACCOUNT_AREA_CONFIG, AccountAreaConfig } from './account-area.config';

function tooMany(message: string, retryAfterMs: number): ApiException {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new ApiException(429, { error: ErrorNames.RateLimit, message: `${message}; retry after ${seconds} s` }, { 'retry-after': String(seconds) });
}

/** Bucket names never carry an email in clear (they live in Redis). */
function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 32);
}

/**
 * Limits of the account area's unauthenticated and mail-sending steps, as token buckets of the
 * gateway's burst limiter (Redis, shared by replicas; per process without it): sign-in attempts
 * per email and per client address, sign-ups per client address (the same bucket), and
 * verification mails per account.
 */
@Injectable()
export class SignInLimits {
  constructor(
    private readonly buckets: BurstLimiter,
    @Inject(ACCOUNT_AREA_CONFIG) private readonly config: AccountAreaConfig,
  ) {}

  private perMinute(count: number): { ratePerSecond: number; capacity: number } {
    return { ratePerSecond: count / 60, capacity: count };
  }

  /** One attempt from this address (sign-in or sign-up): 429 beyond SIGNIN_ATTEMPTS_PER_ADDRESS_PER_MINUTE. */
  async takeAddress(address: string): Promise<void> {
    const decision = await this.buckets.takeFrom(`signin-address:${address}`, this.perMinute(this.config.signInPerAddressPerMinute));
    if (!decision.allowed) throw tooMany('Too many sign-in attempts from this address', decision.retryAfterMs);
  }

  /** One sign-in attempt for this email: 429 beyond SIGNIN_ATTEMPTS_PER_EMAIL_PER_MINUTE. */
  async takeEmail(email: string): Promise<void> {
    const bucket = `signin-email:${digest(email.trim().toLowerCase())}`;
    const decision = await this.buckets.takeFrom(bucket, this.perMinute(this.config.signInPerEmailPerMinute));
    if (!decision.allowed) throw tooMany('Too many sign-in attempts for this email address', decision.retryAfterMs);
  }

  /** One verification mail for this account. */
  async takeVerificationMail(accountId: string): Promise<void> {
    const decision = await this.buckets.takeFrom(`verify-mail:${accountId}`, this.perMinute(this.config.resendPerMinute));
    if (!decision.allowed) throw tooMany('A verification mail was sent less than a minute ago', decision.retryAfterMs);
  }
}
