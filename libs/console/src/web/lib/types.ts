import type { components } from '@cars/client';

/**
 * The wire shapes of the routes the console uses (snake_case, as the API sends them), named from
 * the types generated from the gateway's OpenAPI document (libs/client/src/generated/openapi.ts):
 * a change of a route's shape changes them, and whatever the console does with a member that is
 * gone fails to compile. Types only: nothing of the client is bundled.
 */
type Schemas = components['schemas'];

export type Account = Schemas['AccountDto'];
export type PlanId = Account['plan'];
export type SessionBody = Schemas['AccountSessionResponseDto'];
export type SignUpBody = Schemas['SignUpResponseDto'];
export type VerificationMail = Schemas['VerificationMailResponseDto'];

export type Usage = Schemas['UsageSummaryDto'];
export type PlanSummary = Schemas['PlanSummaryDto'];
export type Overview = Schemas['AccountOverviewResponseDto'];

export type ApiKey = Schemas['ApiKeyDto'];
export type CreatedKey = Schemas['ApiKeyCreatedResponseDto'];

export type Webhook = Schemas['WebhookSubscriptionDto'];
export type EventType = Webhook['event_types'][number];
export type WebhookFilters = Schemas['WebhookFiltersDto'];
export type WebhookHealth = Schemas['WebhookHealthDto'];
export type WebhookInput = Schemas['UpdateWebhookBodyDto'];

export type Delivery = Schemas['WebhookDeliveryDto'];
export type DeliveryStatus = Delivery['status'];

export type TrendPoint = Schemas['PriceTrendPoint'];
export type Stats = Schemas['StatsResponse'];

/** The error envelope of every 4xx/5xx. */
export type ErrorBody = Schemas['ErrorResponseDto'];

/** Each event type a webhook can subscribe to, once: the compiler checks the list against the API's. */
const SUBSCRIBABLE: Record<EventType, true> = { 'auction.created': true, 'auction.updated': true, 'auction.ended': true, 'bid.created': true };
export const EVENT_TYPES = Object.keys(SUBSCRIBABLE) as readonly EventType[];
