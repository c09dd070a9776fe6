import { applyDecorators, Type } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiProperty,
  ApiPropertyOptional,
  ApiServiceUnavailableResponse,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { HeadersObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { ErrorBody } from '@cars/contracts';

/** OpenAPI schema of the error body `{error, message, details?}` (the type itself is `ErrorBody` in contracts). */
export class ErrorResponseDto implements ErrorBody {
  @ApiProperty({ type: 'string', example: 'Validation Error' })
  error: string;

  @ApiProperty({ type: 'string', example: 'Invalid parameter: limit' })
  message: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    description: '400 only: parameter name → messages.',
    example: { limit: ['limit must be an integer from 1 to 100'] },
  })
  details?: Record<string, string[]>;
}

/** The monthly allowance, on every answer of a counted route that got past authentication. */
export const RATE_LIMIT_HEADERS: HeadersObject = {
  'X-RateLimit-Limit': { description: 'Requests allowed this billing period (calendar month, UTC).', schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left this billing period.', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'Start of the next billing period, Unix seconds.', schema: { type: 'integer' } },
};

/** `Retry-After` of a 429 or 503, or of a 409 that passes by itself (a delivery attempt in flight, a test cooldown). */
export const RETRY_AFTER: HeadersObject = {
  'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer' } },
};

const WWW_AUTHENTICATE: HeadersObject = {
  'WWW-Authenticate': { description: '`Bearer`, with `error="invalid_token"` for a bad key.', schema: { type: 'string' } },
};

/** 400; on a counted route (`metered`) it carries the allowance headers, like every answer after authentication. */
export const ApiValidationError = (metered = false) =>
  ApiBadRequestResponse({
    type: ErrorResponseDto,
    description:
      '`Validation Error`: a bad or unknown parameter; `details` maps each parameter to its messages.',
    headers: metered ? RATE_LIMIT_HEADERS : undefined,
  });

/** 200 of a counted route: the body and the allowance headers. */
export const ApiMeteredOk = (type: Type<unknown>, description?: string) =>
  ApiOkResponse({ type, description, headers: RATE_LIMIT_HEADERS });

/** 401, 429 and 503: the answers of API access and of a service that is down (routes capped in flight). */
export const ApiAccessErrors = (service: string) =>
  applyDecorators(
    ApiUnauthorizedResponse({
      type: ErrorResponseDto,
      description: '`Unauthorized`: missing or invalid API key, or more than one Authorization header.',
      headers: WWW_AUTHENTICATE,
    }),
    ApiTooManyRequestsResponse({
      type: ErrorResponseDto,
      description:
        '`Rate Limit Exceeded`: the monthly allowance (X-RateLimit-* headers) or the burst limit (`Retry-After`) is ' +
        'exhausted, or the account has too many requests in flight (`Retry-After`; not counted).',
      headers: { ...RATE_LIMIT_HEADERS, ...RETRY_AFTER },
    }),
    ApiServiceDown(service),
  );

/** 503: the service behind the route did not answer in time (or, query and stats, a statement ran too long). */
export const ApiServiceDown = (service: string) =>
  ApiServiceUnavailableResponse({
    type: ErrorResponseDto,
    description:
      service === 'query' || service === 'stats'
        ? `\`Service Unavailable\`: the ${service} service did not answer in time, or the query took too long and was ` +
          'stopped (QUERY_STATEMENT_TIMEOUT_MS). Not counted.'
        : `\`Service Unavailable\`: the ${service} service did not answer in time.`,
    headers: RETRY_AFTER,
  });

/** The error responses every counted query route can give. */
export const ApiQueryErrors = () => applyDecorators(ApiValidationError(true), ApiAccessErrors('query'));

/** 403 of a route that needs a paid plan. */
export const ApiPaidPlanRequired = () =>
  ApiForbiddenResponse({
    type: ErrorResponseDto,
    description: '`Forbidden`: the account is on the Free plan (or its paid plan expired); the message says which.',
  });

export const ApiAuctionNotFound = () =>
  ApiNotFoundResponse({
    type: ErrorResponseDto,
    description: 'No auction has this id (counts as a request).',
    headers: RATE_LIMIT_HEADERS,
  });
