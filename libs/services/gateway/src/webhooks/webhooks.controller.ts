import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiBody,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import {
  CreateWebhookBodyDto,
  ErrorNames,
  ListWebhooksQueryDto,
  RecoverBodyDto,
  RecoverResponseDto,
  UpdateWebhookBodyDto,
  WebhookCreatedResponseDto,
  WebhookDeliveryListResponseDto,
  WebhookDeliveryResponseDto,
  WebhookListResponseDto,
  WebhookResponseDto,
  WebhookSecretResponseDto,
  WebhooksPatterns,
} from '@cars/contracts';
import { applyDecorators, Type } from '@nestjs/common';
import { ServiceClient, WEBHOOKS_CLIENT } from '@cars/messaging';
import { ApiServiceDown, ApiValidationError, ErrorResponseDto, RETRY_AFTER } from '../auctions/api-responses';
import { CurrentPrincipal } from '../auth/auth.decorators';
import type { ApiPrincipal } from '../http/request-context';
import { accountRequirementError } from '../metering/admission.errors';
import { RequiresPaidPlan } from '../metering/paid-plan.decorator';
import { ApiException, unwrapReply } from '../http/api-exception';

const FEATURE = { verifiedEmail: true } as const;

/** 401, 404, 429 (burst only: management is not counted) and 503 of every webhook route. */
const ApiManagementErrors = (notFound: string, unauthorized: string) =>
  applyDecorators(
    ApiUnauthorizedResponse({ type: ErrorResponseDto, description: unauthorized }),
    ApiNotFoundResponse({ type: ErrorResponseDto, description: notFound }),
    ApiTooManyRequestsResponse({
      type: ErrorResponseDto,
      description: '`Rate Limit Exceeded`: the burst limit (`Retry-After`). Management routes are not counted against the monthly allowance.',
      headers: { 'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer' } } },
    }),
    ApiServiceDown('webhooks'),
  );

const ApiNeedsPaidPlan = () =>
  ApiForbiddenResponse({
    type: ErrorResponseDto,
    description: '`Forbidden`: needs an active 1K, 10K or 100K plan and a verified email address; the message says which is missing.',
  });

const NOT_FOUND = 'No webhook with this id on the account (also for a malformed id).';
const ID_PARAM = ApiParam({ name: 'id', description: 'Webhook id (`whe_` + UUID).', example: 'whe_3f0c6a0e-7f7e-4b8e-9d7a-2b1c4e5f6a7b' });

/** A PATCH that only pauses is allowed without a paid plan (pausing stays possible after a downgrade); anything else is an edit. */
function isPauseOnly(body: unknown): boolean {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 1 && (body as { enabled?: unknown }).enabled === false;
}

export interface WebhookRoutesMount {
  /** The class name (OpenAPI operation ids are `<name>_<method>`). */
  name: string;
  /** Where the routes are mounted: `webhooks`, `account/webhooks`. */
  path: string;
  /** How callers authenticate (OpenAPI security and, for console sessions, the guard). */
  auth: () => ClassDecorator;
  tag: string;
  /** The 401 of the mount. */
  unauthorized: string;
}

/**
 * The webhook management routes as one controller class, mounted once per way in: `/webhooks`
 * with the API key (below), and `/account/webhooks` with a console session (account area). Both
 * mounts are the same code — paths, parameters, bodies, answers, plan rules and messages — and
 * differ only in authentication.
 */
export function webhookRoutes(mount: WebhookRoutesMount): Type<unknown> {
  const errors = (notFound: string) => ApiManagementErrors(notFound, mount.unauthorized);

  @ApiTags(mount.tag)
  @mount.auth()
  @Controller(mount.path)
  class WebhookRoutes {
    constructor(@Inject(WEBHOOKS_CLIENT) private readonly webhooks: ServiceClient) {}

    @Get()
    @ApiOperation({ summary: 'List webhooks', description: 'The account\'s webhook subscriptions, newest first, with `page`/`limit` paging.' })
    @ApiOkResponse({ type: WebhookListResponseDto })
    @ApiValidationError()
    @errors(NOT_FOUND)
    async list(@CurrentPrincipal() principal: ApiPrincipal | undefined, @Query() query: ListWebhooksQueryDto) {
      return unwrapReply(await this.webhooks.send(WebhooksPatterns.List, { account_id: accountOf(principal), ...query }));
    }

    @Post()
    @HttpCode(201)
    @RequiresPaidPlan('Creating webhooks', FEATURE)
    @ApiOperation({
      summary: 'Create a webhook',
      description:
        '`url` (public HTTPS, port 443) and `event_types` are required; `description` defaults to `""`, `filters` to `{}`. ' +
        'The signing secret is in this response only (and at rotation). The endpoint receives events observed from now on. ' +
        '409 when the plan\'s endpoint allowance (1K: 1, 10K: 10, 100K: unlimited; paused endpoints count) is reached.',
    })
    @ApiBody({ type: CreateWebhookBodyDto })
    @ApiCreatedResponse({ type: WebhookCreatedResponseDto })
    @ApiValidationError()
    @ApiNeedsPaidPlan()
    @ApiConflictResponse({ type: ErrorResponseDto, description: 'The plan\'s webhook endpoint allowance is reached.' })
    @errors(NOT_FOUND)
    async create(@CurrentPrincipal() principal: ApiPrincipal | undefined, @Body() body: unknown) {
      return unwrapReply(await this.webhooks.send(WebhooksPatterns.Create, { account_id: accountOf(principal), body }));
    }

    @Get(':id')
    @ApiOperation({ summary: 'Retrieve a webhook' })
    @ID_PARAM
    @ApiOkResponse({ type: WebhookResponseDto })
    @errors(NOT_FOUND)
    async get(@CurrentPrincipal() principal: ApiPrincipal | undefined, @Param('id') id: string) {
      return unwrapReply(await this.webhooks.send(WebhooksPatterns.Get, { account_id: accountOf(principal), id }));
    }

    @Patch(':id')
    @ApiOperation({
      summary: 'Edit, pause or resume a webhook',
      description:
        'Only the members supplied change; `filters` replaces all filters (`{}` clears). A new URL, another set of ' +
        'event types or filters that behave differently start a new activation boundary (later observations only); ' +
        'description edits, reordering and recapitalizing do not. `enabled: false` pauses and cancels pending ' +
        'deliveries (allowed on any plan); `enabled: true` resumes, skipping what was observed while paused.',
    })
    @ID_PARAM
    @ApiBody({ type: UpdateWebhookBodyDto })
    @ApiOkResponse({ type: WebhookResponseDto })
    @ApiValidationError()
    @ApiNeedsPaidPlan()
    @ApiConflictResponse({ type: ErrorResponseDto, description: 'Resuming beyond the plan\'s endpoint allowance.' })
    @errors(NOT_FOUND)
    async update(@CurrentPrincipal() principal: ApiPrincipal | undefined, @Param('id') id: string, @Body() body: unknown) {
      const account = accountOf(principal);
      if (!isPauseOnly(body)) requireAccount(principal!, 'Editing webhooks');
      return unwrapReply(await this.webhooks.send(WebhooksPatterns.Update, { account_id: account, id, body }));
    }

    @Delete(':id')
    @HttpCode(204)
    @ApiOperation({
      summary: 'Delete a webhook',
      description:
        'Removes the subscription and its delivery history. 409 with `Retry-After` (seconds) while a delivery attempt is in flight, e.g. right after a test: send the delete again after that long (the typed client does).',
    })
    @ID_PARAM
    @ApiNoContentResponse({ description: 'Deleted.' })
    @ApiConflictResponse({
      type: ErrorResponseDto,
      description: 'A delivery attempt to the endpoint is in flight; it ends within 10 s. Retry after `Retry-After` seconds.',
      headers: RETRY_AFTER,
    })
    @errors(NOT_FOUND)
    async delete(@CurrentPrincipal() principal: ApiPrincipal | undefined, @Param('id') id: string): Promise<void> {
      unwrapReply(await this.webhooks.send(WebhooksPatterns.Delete, { account_id: accountOf(principal), id }));
    }

    @Post(':id/test')
    @HttpCode(202)
    @RequiresPaidPlan('Sending test events', FEATURE)
    @ApiOperation({
      summary: 'Send a test event',
      description: 'Queues a `webhook.test` event for the endpoint (free of charge); one per endpoint per minute.',
    })
    @ID_PARAM
    @ApiAcceptedResponse({ type: WebhookDeliveryResponseDto, description: 'The queued delivery.' })
    @ApiNeedsPaidPlan()
    @ApiConflictResponse({
      type: ErrorResponseDto,
      description: 'A test was sent less than a minute ago (`Retry-After`: seconds until the next one may be sent), or the endpoint is paused.',
      headers: RETRY_AFTER,
    })
    @errors(NOT_FOUND)
    async sendTest(@CurrentPrincipal() principal: ApiPrincipal | undefined, @Param('id') id: string) {
      return unwrapReply(await this.webhooks.send(WebhooksPatterns.SendTest, { account_id: accountOf(principal), id }));
    }

    @Post(':id/secret/rotate')
    @HttpCode(200)
    @RequiresPaidPlan('Rotating webhook secrets', FEATURE)
    @ApiOperation({
      summary: 'Rotate the signing secret',
      description:
        'A new secret, returned once. For 24 hours every attempt is signed with both the new and the previous secret; rotating again replaces the previous one.',
    })
    @ID_PARAM
    @ApiOkResponse({ type: WebhookSecretResponseDto })
    @ApiNeedsPaidPlan()
    @errors(NOT_FOUND)
    async rotateSecret(@CurrentPrincipal() principal: ApiPrincipal | undefined, @Param('id') id: string) {
      return unwrapReply(await this.webhooks.send(WebhooksPatterns.RotateSecret, { account_id: accountOf(principal), id }));
    }

    @Get(':id/deliveries')
    @ApiOperation({ summary: 'Recent deliveries', description: 'The 20 most recent deliveries of the webhook, newest first.' })
    @ID_PARAM
    @ApiOkResponse({ type: WebhookDeliveryListResponseDto })
    @errors(NOT_FOUND)
    async deliveries(@CurrentPrincipal() principal: ApiPrincipal | undefined, @Param('id') id: string) {
      return unwrapReply(await this.webhooks.send(WebhooksPatterns.ListDeliveries, { account_id: accountOf(principal), id }));
    }

    @Post(':id/deliveries/:deliveryId/retry')
    @HttpCode(202)
    @RequiresPaidPlan('Retrying deliveries', FEATURE)
    @ApiOperation({
      summary: 'Retry a delivery',
      description:
        'A `failed` delivery, or a `pending` one waiting for its next automatic retry, is sent again now with its original ' +
        'event id and payload and a new budget of six attempts. The endpoint must be enabled.',
    })
    @ID_PARAM
    @ApiParam({ name: 'deliveryId', description: 'Delivery id (`whd_` + UUID).' })
    @ApiAcceptedResponse({ type: WebhookDeliveryResponseDto, description: 'The delivery, queued.' })
    @ApiNeedsPaidPlan()
    @ApiConflictResponse({
      type: ErrorResponseDto,
      description: 'The delivery succeeded, is in flight, was canceled or has not been attempted yet, or the endpoint is paused.',
    })
    @errors('No such webhook on the account, or no such delivery on the webhook.')
    async retry(
      @CurrentPrincipal() principal: ApiPrincipal | undefined,
      @Param('id') id: string,
      @Param('deliveryId') deliveryId: string,
    ) {
      return unwrapReply(
        await this.webhooks.send(WebhooksPatterns.RetryDelivery, { account_id: accountOf(principal), id, delivery_id: deliveryId }),
      );
    }

    @Post(':id/recover')
    @HttpCode(202)
    @RequiresPaidPlan('Recovering deliveries', FEATURE)
    @ApiOperation({
      summary: 'Recover failed deliveries after an outage',
      description:
        'Every `failed` delivery of the webhook created in `[since, until)` (a window of at most 14 days; `until` ' +
        'defaults to now) is sent again with a new budget of six attempts, with its original event id and payload. ' +
        'The endpoint must be enabled.',
    })
    @ID_PARAM
    @ApiBody({ type: RecoverBodyDto })
    @ApiAcceptedResponse({ type: RecoverResponseDto, description: 'How many deliveries were queued again.' })
    @ApiValidationError()
    @ApiNeedsPaidPlan()
    @ApiConflictResponse({ type: ErrorResponseDto, description: 'The endpoint is paused.' })
    @errors(NOT_FOUND)
    async recover(@CurrentPrincipal() principal: ApiPrincipal | undefined, @Param('id') id: string, @Body() body: unknown) {
      return unwrapReply(await this.webhooks.send(WebhooksPatterns.Recover, { account_id: accountOf(principal), id, body }));
    }
  }
  Object.defineProperty(WebhookRoutes, 'name', { value: mount.name });
  return WebhookRoutes;
}

/** `/webhooks`: the management routes for API keys. */
export const WebhooksController = webhookRoutes({
  name: 'WebhooksController',
  path: 'webhooks',
  auth: () => ApiBearerAuth(),
  tag: 'Webhooks',
  unauthorized: '`Unauthorized`: missing or invalid API key.',
});

/** Webhooks belong to an account: without API access (METERING_ENABLED=false) there is none. */
function accountOf(principal: ApiPrincipal | undefined): string {
  if (!principal) {
    throw new ApiException(403, {
      error: ErrorNames.Forbidden,
      message: 'Webhook management needs an account: this gateway runs with API access turned off (METERING_ENABLED=false)',
    });
  }
  return principal.accountId;
}

function requireAccount(principal: ApiPrincipal, feature: string): void {
  const error = accountRequirementError(principal, { feature, verifiedEmail: true });
  if (error) throw error;
}
