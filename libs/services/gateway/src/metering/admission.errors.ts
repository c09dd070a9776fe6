import { ErrorNames } from '@cars/contracts';
import { formatLimit, paidFeatureRefusal, Plan, PlanId } from '@cars/accounts';
import { ApiException } from '../http/api-exception';

/** The 403/429 answers of request admission (plan, burst limit, requests in flight, monthly allowance), with the error values of docs/api/accounts.md. */

/**
 * 403 when the account lacks what the route requires (an active paid plan; for webhook changes a
 * verified email too), or null. The wording is the accounts lib's, shared with the webhooks service.
 */
export function accountRequirementError(
  account: { plan: PlanId; planExpiresAt: Date | null; emailVerified: boolean },
  requirement: { feature: string; verifiedEmail: boolean },
  now?: Date,
): ApiException | null {
  const refusal = paidFeatureRefusal(requirement.feature, account, { verifiedEmail: requirement.verifiedEmail, now });
  return refusal === null ? null : new ApiException(403, { error: ErrorNames.Forbidden, message: refusal });
}

export function burstLimitExceeded(
  plan: Plan,
  ratePerSecond: number,
  capacity: number,
  retryAfterMs: number,
  per: 'API key' | 'account' = 'API key',
): ApiException {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new ApiException(
    429,
    {
      error: ErrorNames.RateLimit,
      message:
        `Burst limit exceeded: the ${plan.name} plan allows ${formatLimit(ratePerSecond)} requests per second ` +
        `per ${per}, in bursts of up to ${formatLimit(capacity)}; retry after ${seconds} s`,
    },
    { 'retry-after': String(seconds) },
  );
}

/** 429: the account already has a several-word keyword search in flight (they run one at a time per service). */
export function tooManyBroadSearches(limit: number): ApiException {
  return new ApiException(
    429,
    {
      error: ErrorNames.RateLimit,
      message:
        `Too many keyword searches of several words in flight for this account (limit ${limit} at a time): they test ` +
        `each candidate description, so each account runs ${limit} at once; retry after 1 s. Not counted`,
    },
    { 'retry-after': '1' },
  );
}

/** 429 of the per-account cap on requests in flight: not charged, retry once an answer is back. */
export function tooManyInFlight(limit: number): ApiException {
  return new ApiException(
    429,
    {
      error: ErrorNames.RateLimit,
      message:
        `Too many requests in flight for this account (limit ${limit} at a time, all its API keys and console ` +
        `sessions together): wait for an answer before sending another; retry after 1 s. Not counted`,
    },
    { 'retry-after': '1' },
  );
}

export function monthlyLimitExceeded(plan: Plan, headers: Record<string, string>): ApiException {
  return new ApiException(
    429,
    {
      error: ErrorNames.RateLimit,
      message:
        `Monthly request limit of ${formatLimit(plan.monthlyLimit)} for the ${plan.name} plan exceeded; ` +
        `the allowance resets at the start of next month (UTC, see X-RateLimit-Reset), or upgrade the plan`,
    },
    headers,
  );
}
