import { ExecutionContext, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { routeMetadata } from '../http/route-metadata';

export const PAID_PLAN = 'cars:paid-plan';

export interface PaidPlanRequirement {
  /** What the route offers, for the 403 message: "Pricing statistics", "Webhooks"… */
  feature: string;
  /** Also require a verified email address (webhook creation: docs/api/webhooks.md). */
  verifiedEmail: boolean;
}

/**
 * The route needs an active 1K, 10K or 100K plan (an expired plan is Free): otherwise 403
 * `{error: 'Forbidden', message}`. Checked after authentication and the burst limit, before
 * the monthly allowance is touched.
 */
export const RequiresPaidPlan = (
  feature = 'This route',
  options: { verifiedEmail?: boolean } = {},
): MethodDecorator & ClassDecorator =>
  SetMetadata(PAID_PLAN, { feature, verifiedEmail: options.verifiedEmail ?? false } satisfies PaidPlanRequirement);

export function paidPlanRequirement(reflector: Reflector, context: ExecutionContext): PaidPlanRequirement | undefined {
  return routeMetadata<PaidPlanRequirement>(reflector, context, PAID_PLAN);
}
