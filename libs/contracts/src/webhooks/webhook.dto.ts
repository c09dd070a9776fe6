import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsUUID } from 'class-validator';
import { MAX_LIMIT, MAX_PAGE } from '../dto/pagination.dto';
import { IntegerParam } from '../dto/auctions.validators';
import { AUCTION_SOURCES } from '../dto/auctions.dto';
import { EventTypes, SUBSCRIBABLE_EVENT_TYPES, SubscribableEventType } from '../events/event-envelope';
import {
  DELIVERY_ERROR_CODES,
  DELIVERY_STATUSES,
  DELIVERY_WAITING_REASONS,
  DeliveryErrorCode,
  DeliveryStatus,
  DeliveryWaitingReason,
  WEBHOOK_CIRCUIT_STATES,
  WebhookCircuitState,
  WebhookDelivery,
  WebhookFilters,
  WebhookHealth,
  WebhookSubscription,
} from './webhook-records';

/**
 * The OpenAPI shapes of the webhook routes: the records of `webhook-records.ts` as classes the
 * document is generated from. Bodies are checked member by member by the webhooks service (every
 * problem named in `details`); these classes describe them.
 */

/** A signing secret: `whsec_` and the base64 of its key. */
const SIGNING_SECRET_PATTERN = '^whsec_[A-Za-z0-9+/]+={0,2}$';
/** The document's example secret: the shape of a real one (32 random bytes), never a real one. */
const SIGNING_SECRET_EXAMPLE = 'whsec_ws+CoNqXxfdXlZIyyLXciVOWBZITY6iGUneYouhiimY=';

/** GET /webhooks paging: `page` ≥ 1, `limit` 1–100 (default 50), as on every list route. */
export const WEBHOOKS_DEFAULT_LIMIT = 50;

export class ListWebhooksQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1, description: 'Page number.' })
  @IntegerParam(1, MAX_PAGE)
  page?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: WEBHOOKS_DEFAULT_LIMIT })
  @IntegerParam(1, MAX_LIMIT)
  limit?: number;
}

/** The list request as the webhooks service validates it on consume: the caller and the paging. */
export class ListWebhooksRequestDto extends ListWebhooksQueryDto {
  @IsUUID('all', { message: 'account_id must be a UUID' })
  account_id: string;
}

export class WebhookFiltersDto implements WebhookFilters {
  @ApiPropertyOptional({ type: 'string', pattern: '^[1-9][0-9]*$', description: 'Exact auction id, as a string.', example: '48213' })
  auction_id?: string;

  @ApiPropertyOptional({ type: 'string', minLength: 1, description: 'Canonical make name (see /makes), any case.', example: 'Porsche' })
  make?: string;

  @ApiPropertyOptional({
    type: 'string',
    description: `Platform identifier, any case (kept as given): ${AUCTION_SOURCES.join(', ')}.`,
    example: 'bringatrailer',
  })
  source?: string;
}

export class WebhookHealthDto implements WebhookHealth {
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Failed attempts since the last successful one.' })
  consecutive_failures: number;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  last_success_at: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  last_failure_at: string | null;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Deliveries `pending` or `sending`.' })
  pending_deliveries: number;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When the oldest open delivery was created.' })
  oldest_pending_at: string | null;

  @ApiProperty({
    enum: WEBHOOK_CIRCUIT_STATES,
    description:
      'The endpoint\'s circuit: `closed` (delivering), `open` (it kept failing: its deliveries wait, using no attempt, until `circuit_retry_at`), `half_open` (one probe attempt in flight).',
  })
  circuit: WebhookCircuitState;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'While `open`: when the probe attempt is due.' })
  circuit_retry_at: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When the circuit opened; null while `closed`.' })
  circuit_opened_at: string | null;
}

export class WebhookSubscriptionDto implements WebhookSubscription {
  @ApiProperty({ type: 'string', pattern: '^whe_[0-9a-f-]{36}$', example: 'whe_3f0c6a0e-7f7e-4b8e-9d7a-2b1c4e5f6a7b' })
  id: string;

  @ApiProperty({ type: 'string', format: 'uri', description: 'Public HTTPS destination (port 443).', example: 'https://hooks.example.com/cars' })
  url: string;

  @ApiProperty({ type: 'string', maxLength: 500, example: 'Porsche results for the pricing desk' })
  description: string;

  @ApiProperty({ type: 'array', items: { type: 'string', enum: [...SUBSCRIBABLE_EVENT_TYPES] }, minItems: 1, example: ['auction.ended'] })
  event_types: SubscribableEventType[];

  @ApiProperty({ type: WebhookFiltersDto, description: 'Combined with AND; an omitted key accepts everything.' })
  filters: WebhookFiltersDto;

  @ApiProperty({ type: 'boolean', description: 'False means paused.', example: true })
  enabled: boolean;

  @ApiProperty({ type: 'string', format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: 'string', format: 'date-time' })
  updated_at: string;

  @ApiProperty({
    type: WebhookHealthDto,
    description: 'Additive: whether the endpoint is failing or backed up, without reading every delivery.',
  })
  health: WebhookHealthDto;
}

export class CreateWebhookBodyDto {
  @ApiProperty({ type: 'string', maxLength: 2048, example: 'https://hooks.example.com/cars' })
  url: string;

  @ApiPropertyOptional({ type: 'string', maxLength: 500, default: '' })
  description?: string;

  @ApiProperty({
    type: 'array',
    items: { type: 'string', enum: [...SUBSCRIBABLE_EVENT_TYPES] },
    minItems: 1,
    description: `No duplicates; \`${EventTypes.WebhookTest}\` cannot be chosen (send one with POST /webhooks/{id}/test).`,
    example: ['auction.ended', 'bid.created'],
  })
  event_types: string[];

  @ApiPropertyOptional({ type: WebhookFiltersDto, default: {} })
  filters?: WebhookFiltersDto;
}

export class UpdateWebhookBodyDto {
  @ApiPropertyOptional({ type: 'string', maxLength: 2048 })
  url?: string;

  @ApiPropertyOptional({ type: 'string', maxLength: 500 })
  description?: string;

  @ApiPropertyOptional({ type: 'array', items: { type: 'string', enum: [...SUBSCRIBABLE_EVENT_TYPES] }, minItems: 1 })
  event_types?: string[];

  @ApiPropertyOptional({ type: WebhookFiltersDto, description: 'Replaces every filter; `{}` clears them.' })
  filters?: WebhookFiltersDto;

  @ApiPropertyOptional({ type: 'boolean', description: '`false` pauses (pending deliveries are canceled); `true` resumes.' })
  enabled?: boolean;
}

export class WebhookResponseDto {
  @ApiProperty({ type: WebhookSubscriptionDto })
  data: WebhookSubscriptionDto;
}

export class WebhookCreatedResponseDto {
  @ApiProperty({ type: WebhookSubscriptionDto })
  data: WebhookSubscriptionDto;

  @ApiProperty({
    type: 'string',
    pattern: SIGNING_SECRET_PATTERN,
    description: 'The signing secret: shown here and at rotation only. Store it now.',
    example: SIGNING_SECRET_EXAMPLE,
  })
  secret: string;
}

export class WebhookPageMetaDto {
  @ApiProperty({ type: 'integer', minimum: 0 })
  total: number;

  @ApiProperty({ type: 'integer', minimum: 1 })
  page: number;

  @ApiProperty({ type: 'integer', minimum: 1, maximum: MAX_LIMIT })
  limit: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  total_pages: number;
}

export class WebhookListResponseDto {
  @ApiProperty({ type: [WebhookSubscriptionDto], description: 'Newest first.' })
  data: WebhookSubscriptionDto[];

  @ApiProperty({ type: WebhookPageMetaDto })
  meta: WebhookPageMetaDto;
}

export class WebhookSecretDto {
  @ApiProperty({ type: 'string', pattern: SIGNING_SECRET_PATTERN, example: SIGNING_SECRET_EXAMPLE })
  secret: string;
}

export class WebhookSecretResponseDto {
  @ApiProperty({ type: WebhookSecretDto })
  data: WebhookSecretDto;
}

export class WebhookDeliveryDto implements WebhookDelivery {
  @ApiProperty({ type: 'string', pattern: '^whd_[0-9a-f-]{36}$', example: 'whd_0b6e1f8e-2c1d-4c55-8f3e-5a9b7c6d4e21' })
  id: string;

  @ApiProperty({ type: 'string', description: 'Equal to `payload.id` and the `webhook-id` header.', example: 'evt_6c1f…' })
  event_id: string;

  @ApiProperty({ type: 'string', example: 'auction.ended' })
  event_type: string;

  @ApiProperty({ enum: DELIVERY_STATUSES })
  status: DeliveryStatus;

  @ApiProperty({
    enum: [...DELIVERY_WAITING_REASONS, null],
    nullable: true,
    description: 'Why a `pending` delivery is not being attempted: an exhausted allowance, or make maintenance.',
  })
  waiting_reason: DeliveryWaitingReason | null;

  @ApiProperty({ type: 'integer', minimum: 0 })
  attempts: number;

  @ApiProperty({ type: 'integer', minimum: 1, description: 'Six per budget; a manual retry adds a new budget of six.' })
  max_attempts: number;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  next_attempt_at: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  last_attempt_at: string | null;

  @ApiProperty({ type: 'integer', nullable: true })
  last_response_status: number | null;

  @ApiProperty({ enum: [...DELIVERY_ERROR_CODES, null], nullable: true, description: 'A short code of the last failed attempt.' })
  last_error: DeliveryErrorCode | null;

  @ApiProperty({ type: 'string', nullable: true, maxLength: 4096, description: "At most 4 KB of the receiver's body." })
  last_response_excerpt: string | null;

  @ApiProperty({ type: 'integer', nullable: true })
  last_duration_ms: number | null;

  @ApiProperty({ type: 'string', format: 'date-time' })
  created_at: string;

  @ApiProperty({ type: 'string', format: 'date-time' })
  updated_at: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The public event envelope exactly as it is or was sent.',
    example: { id: 'evt_…', type: 'webhook.test', api_version: '2026-10-17', created_at: '2026-11-25T10:00:00.000Z', data: { message: '…' } },
  })
  payload: unknown;
}

export class WebhookDeliveryResponseDto {
  @ApiProperty({ type: WebhookDeliveryDto })
  data: WebhookDeliveryDto;
}

export class WebhookDeliveryListResponseDto {
  @ApiProperty({ type: [WebhookDeliveryDto], description: 'The 20 most recent, newest first.' })
  data: WebhookDeliveryDto[];
}

export class RecoverBodyDto {
  @ApiProperty({ type: 'string', format: 'date-time', description: 'Start of the window (with an offset).', example: '2026-11-20T00:00:00Z' })
  since: string;

  @ApiPropertyOptional({ type: 'string', format: 'date-time', description: 'End of the window (default now); at most 14 days after `since`.' })
  until?: string;
}

export class RecoveredDto {
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Failed deliveries given a new budget of six attempts.' })
  recovered: number;
}

export class RecoverResponseDto {
  @ApiProperty({ type: RecoveredDto })
  data: RecoveredDto;
}
